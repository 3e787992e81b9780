import { applyDecorators, UseInterceptors } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import { LIMITS } from '@petstore/domain';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { IdempotencyInterceptor } from './idempotency.interceptor';

/**
 * Makes a POST safe to retry with `Idempotency-Key` (LIMITS.idempotencyKey characters, per account,
 * kept 24 hours): one line on the handler, documented in the OpenAPI description.
 */
export function Idempotent(): MethodDecorator {
  return applyDecorators(
    UseInterceptors(IdempotencyInterceptor),
    ApiHeader({
      name: 'Idempotency-Key',
      required: false,
      description:
        'Makes the request safe to retry: the same key with the same body returns the first response again ' +
        '(with `Idempotent-Replayed: true`) for 24 hours. Only successful responses are kept; a failed request ' +
        'leaves no trace and may be retried with the same key.',
      schema: { type: 'string', minLength: LIMITS.idempotencyKey.min, maxLength: LIMITS.idempotencyKey.max },
    }),
    ApiErrors({
      409:
        'A request with the same Idempotency-Key is still running (`idempotency_key_in_use`), ' +
        'or the state conflicts.',
      422:
        'The Idempotency-Key was used with a different request (`idempotency_key_reused`), ' +
        'or the body names something that does not exist.',
    }),
  );
}
