/** The largest request body, in bytes (413 `payload_too_large` beyond). */
export const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * Whether a request announces a body still to be read (a Content-Length above 0, or any Transfer-Encoding): what the
 * slow-upload rule watches, and what admission lets in only once it has arrived.
 */
export function announcesBody(headers: { 'content-length'?: string; 'transfer-encoding'?: string }): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
