import { ApplicationError } from '../common/application-error';

/**
 * What a persistence port may fail with, besides domain errors. The infrastructure translates
 * its driver's errors into these once (libs/infrastructure/src/database/driver-errors.ts);
 * nothing above it sees a driver error or message.
 */
export abstract class PersistenceError extends ApplicationError {}

/**
 * The database cannot serve now: unreachable, connection lost, no pooled connection in time,
 * a statement or a reply that took too long. Transient: the same request may succeed later.
 */
export class StoreUnavailableError extends PersistenceError {
  readonly kind = 'store_unavailable' as const;
  constructor(
    readonly reason: 'unreachable' | 'connection_lost' | 'timeout',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The connection was lost, or the reply given up on, while the transaction's COMMIT was on its way: it may have
 * committed or not, and nothing here can tell. Not "unavailable" (which means nothing was done): retrying as it is
 * could do the work twice; with the same idempotency key it cannot.
 */
export class OutcomeUnknownError extends PersistenceError {
  readonly kind = 'outcome_unknown' as const;
}

/** Two transactions collided (serialization failure, deadlock): retrying may succeed. */
export class ConcurrentUpdateError extends PersistenceError {
  readonly kind = 'concurrent_update' as const;
}

/** A constraint of the schema refused a write that no domain rule caught first (a race, mostly). */
export class ConstraintViolationError extends PersistenceError {
  readonly kind = 'constraint_violation' as const;
  constructor(
    readonly constraintKind: 'unique' | 'foreign_key' | 'check' | 'not_null' | 'exclusion',
    /** The constraint's name, when the database gives it. */
    readonly constraint: string | undefined,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The database refused a value it cannot store or read as its type (text with U+0000, a number out of range). */
export class InvalidStoredValueError extends PersistenceError {
  readonly kind = 'invalid_stored_value' as const;
}
