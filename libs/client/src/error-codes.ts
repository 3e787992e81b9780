import type { components, paths } from './generated/schema.js';

/** Every `code` the API documents (`ErrorCode` in its OpenAPI description), for an exhaustive `switch`. */
export type KnownErrorCode = components['schemas']['ErrorCode'];

/**
 * The `code` of an error: one the API documents, or one added after this version of the client, which a `switch`
 * must leave to its `default` (`(string & {})` keeps the known ones suggested while any string is accepted).
 */
export type ErrorCode = KnownErrorCode | (string & {});

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
