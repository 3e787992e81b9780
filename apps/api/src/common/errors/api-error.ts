import type { PublicErrorCode } from './error-codes';

export interface ErrorDetail {
  field: string;
  message: string;
}

/** An error the HTTP layer raises itself (auth, validation, parsing), already in API terms. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    /** One of ERROR_CODES (error-codes.ts): a new code is added there, and to docs/api.md, first. */
    readonly code: PublicErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  static validation(message: string, details?: ErrorDetail[]): ApiError {
    return new ApiError(400, 'validation_failed', message, details);
  }

  static unauthorized(message = 'A valid API key is required: send "Authorization: Bearer <API_KEY>".'): ApiError {
    return new ApiError(401, 'unauthorized', message, undefined, { 'WWW-Authenticate': 'Bearer realm="petstore"' });
  }

  /**
   * The key was valid and its `expiresAt` has passed: it will never work again. The same challenge as every 401 (the
   * code says why).
   */
  static apiKeyExpired(): ApiError {
    return new ApiError(
      401,
      'api_key_expired',
      'This API key has expired (its expiresAt has passed): create a new key with one that is valid.',
      undefined,
      { 'WWW-Authenticate': 'Bearer realm="petstore"' },
    );
  }

  /** The key is valid but its scopes do not cover the operation (a `read` key on a write). */
  static insufficientScope(needed: string, held: readonly string[]): ApiError {
    const has = held.map((scope) => `\`${scope}\``).join(', ');
    return new ApiError(
      403,
      'insufficient_scope',
      `This operation needs an API key with the \`${needed}\` scope; this key has ${has}.`,
    );
  }

  /** The key's account lacks the role the operation asks for (the one role there is to lack: administrator). */
  static forbidden(
    message = "This operation needs an administrator's API key; this key belongs to a customer account.",
  ): ApiError {
    return new ApiError(403, 'forbidden', message);
  }

  static notFound(message = 'No such resource.'): ApiError {
    return new ApiError(404, 'not_found', message);
  }

  /**
   * 503 `service_unavailable` with `Retry-After`: the one way every layer says "not now" (drain: 1 s; an
   * unreachable database, a late handler, a readiness probe: 5 s; see also the error table's store kinds).
   */
  static serviceUnavailable(message: string, retryAfterSeconds: number): ApiError {
    return new ApiError(503, 'service_unavailable', message, undefined, { 'Retry-After': String(retryAfterSeconds) });
  }

  /**
   * The 503 of a process shutting down (the drain, readiness): expected, so logged by the access line alone, at
   * `info` (expected-refusal.ts).
   */
  static shuttingDown(message: string, retryAfterSeconds: number): ApiError {
    const error = ApiError.serviceUnavailable(message, retryAfterSeconds);
    error.expected = true;
    return error;
  }

  /**
   * 503 `overloaded`: the admission limit refused the request before its handler ran (before authentication too,
   * unless it has a body: that is decided once the body has arrived); nothing was done, safe to repeat after
   * `Retry-After`. Expected under overload: its access line at `info`, nothing more.
   */
  static overloaded(message: string, retryAfterSeconds: number): ApiError {
    const error = new ApiError(503, 'overloaded', message, undefined, { 'Retry-After': String(retryAfterSeconds) });
    error.expected = true;
    return error;
  }

  /** An answer the service gives by design (shuttingDown, overloaded): no warning, an `info` access line. */
  expected = false;

  /**
   * 503 `outcome_unknown`: the request was cut off (handler timeout, shutdown) while its COMMIT was on its way, so
   * it may have been done. Unlike `service_unavailable`, not safe to repeat as it is: retry with the same
   * `Idempotency-Key` (a replay if it was done), or read first.
   */
  static outcomeUnknown(message: string, retryAfterSeconds: number): ApiError {
    return new ApiError(503, 'outcome_unknown', message, undefined, { 'Retry-After': String(retryAfterSeconds) });
  }
}
