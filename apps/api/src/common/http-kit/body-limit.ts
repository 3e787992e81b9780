/** The largest request body, in bytes (413 `payload_too_large` beyond). */
export const BODY_LIMIT_BYTES = 64 * 1024;
