import type { components, paths } from './generated/schema.js';

/** Every `code` the API documents (`ErrorCode` in its OpenAPI description), for an exhaustive `switch`. */
export type KnownErrorCode = components['schemas']['ErrorCode'];

/**
 * The codes the client itself gives a `PetstoreApiError`, where the API gave none: `http_error` (a non-2xx whose body
 * is not the API's JSON `Error`, say a proxy's HTML page), `empty_response` (`unwrap` of a 2xx without its body),
 * `connection_error` and `timeout` (no response at all, after the retries: a `PetstoreConnectionError`).
 */
export type ClientErrorCode = 'http_error' | 'empty_response' | 'connection_error' | 'timeout';

/**
 * The `code` of an error: one the API documents, one the client gives (`ClientErrorCode`), or one added after this
 * version of the client, which a `switch` must leave to its `default` (`(string & {})` keeps the known ones
 * suggested while any string is accepted).
 */
export type ErrorCode = KnownErrorCode | ClientErrorCode | (string & {});

type ErrorStatus = `${4 | 5}${number}`;
/** The JSON bodies of an operation's error responses (4xx, 5xx). */
type ErrorBodies<Operation> = Operation extends { responses: infer Responses }
  ? {
      [Status in keyof Responses]: `${Status & (string | number)}` extends ErrorStatus
        ? Responses[Status] extends { content: { 'application/json': infer Body } }
          ? Body
          : never
        : never;
    }[keyof Responses]
  : never;

/**
 * The codes one operation documents, over all its error statuses: `OperationErrorCode<'/store/orders', 'post'>` is
 * `'pet_not_available' | 'insufficient_stock' | … | 'service_unavailable'`. (`PetstoreApiError.code` is the wider
 * `ErrorCode`: a newer service may answer a code this client's description did not list.)
 */
export type OperationErrorCode<Path extends keyof paths, Method extends 'get' | 'put' | 'post' | 'delete' | 'patch'> =
  ErrorBodies<paths[Path][Method]> extends infer Body ? (Body extends { code: infer Code } ? Code : never) : never;
