import { ApplicationError } from '../common/application-error';

/** Another request with the same key has not finished yet. */
export class IdempotencyKeyInUseError extends ApplicationError {
  readonly kind = 'idempotency_key_in_use' as const;
  constructor() {
    super('A request with this Idempotency-Key is still being processed; retry shortly.');
  }
}

/**
 * The key already belongs to a different request (another method, path or body; for a result that shows a secret,
 * another API key of the account).
 */
export class IdempotencyKeyReusedError extends ApplicationError {
  readonly kind = 'idempotency_key_reused' as const;
  constructor() {
    super(
      'This Idempotency-Key was already used with a different request (or, for a response that shows a secret, ' +
        'by another API key).',
    );
  }
}

/**
 * The request was done; its kept result shows a secret and is sealed, and the seal does not open (the record was
 * altered, or sealed in a way this version cannot read). Nothing is done again: the first result stands.
 */
export class IdempotentReplayWithheldError extends ApplicationError {
  readonly kind = 'idempotency_replay_withheld' as const;
  constructor() {
    super(
      'This Idempotency-Key was already used and the request was done, but its result (which shows a secret) ' +
        'cannot be given again. Nothing was done twice.',
    );
  }
}
