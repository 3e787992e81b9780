import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';

/** Metadata of `@NotIdempotent(reason)`: the reason. */
export const NOT_IDEMPOTENT = 'petstore:not-idempotent';
/** Metadata of `@ShowsSecret()`. */
export const SHOWS_SECRET = 'petstore:shows-secret';
/**
 * The description's mark of a write (POST, PATCH, DELETE) that does not honour Idempotency-Key: its value is the
 * reason.
 */
export const NOT_IDEMPOTENT_EXTENSION = 'x-idempotency-exempt';
/** The description's mark of an operation whose result is kept sealed (docs/api.md, Idempotency). */
export const SHOWS_SECRET_EXTENSION = 'x-shows-secret';

/**
 * Every POST, PATCH and DELETE honours `Idempotency-Key` (applyIdempotencyToWrites wraps each such handler at start-up;
 * the description says so per operation): this takes one out, with the reason, which the description shows. None does
 * today.
 */
export function NotIdempotent(reason: string): MethodDecorator {
  if (!reason.trim()) throw new Error('@NotIdempotent() needs the reason.');
  return applyDecorators(SetMetadata(NOT_IDEMPOTENT, reason), ApiExtension(NOT_IDEMPOTENT_EXTENSION, reason));
}

/**
 * The response shows a secret once (an API key, a webhook signing secret): its idempotent replay is kept sealed
 * with a key derived from the Idempotency-Key the client sent, never in clear (ResultSealer).
 */
export function ShowsSecret(): MethodDecorator {
  return applyDecorators(SetMetadata(SHOWS_SECRET, true), ApiExtension(SHOWS_SECRET_EXTENSION, true));
}
