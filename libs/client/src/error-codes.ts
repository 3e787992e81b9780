import type { components } from './generated/schema.js';

/** Every `code` the API documents (`ErrorCode` in its OpenAPI description), for an exhaustive `switch`. */
export type KnownErrorCode = components['schemas']['ErrorCode'];

/**
 * The `code` of an error: one the API documents, or one added after this version of the client, which a `switch`
 * must leave to its `default` (`(string & {})` keeps the known ones suggested while any string is accepted).
 */
export type ErrorCode = KnownErrorCode | (string & {});
