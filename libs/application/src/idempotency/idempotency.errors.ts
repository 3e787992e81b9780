import { DomainError } from '@petstore/domain';

export class IdempotencyKeyInUseError extends DomainError {
  readonly code = 'idempotency_key_in_use';
  readonly kind = 'conflict' as const;
  constructor() {
    super('A request with this Idempotency-Key is still being processed; retry shortly.');
  }
}

export class IdempotencyKeyReusedError extends DomainError {
  readonly code = 'idempotency_key_reused';
  readonly kind = 'unknown_reference' as const;
  constructor() {
    super('This Idempotency-Key was already used with a different request.');
  }
}
