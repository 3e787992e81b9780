import type { DomainErrorKind } from '@petstore/domain';

/** What a refusal or failure of the application layer means (the domain's refusals have their own kinds). */
export type ApplicationErrorKind =
  | 'idempotency_key_in_use' //  a request with the same key is still running
  | 'idempotency_key_reused' //  the key was used with another request
  | 'delivery_pending' //        a webhook delivery asked to be retried has its attempt due (queued or under way)
  | 'webhook_delivery_off' //    a ping or retry asked of a process that sends no webhooks (WEBHOOKS_DELIVERY=off)
  | 'idempotency_replay_withheld' // the kept result is sealed and does not open
  | 'store_unavailable' //       the database cannot serve now (transient)
  | 'outcome_unknown' //         the connection was lost (or gave up) while the COMMIT was on its way
  | 'concurrent_update' //       two transactions collided (transient)
  | 'constraint_violation' //    a schema constraint refused a write no rule caught first
  | 'invalid_stored_value' //    the database cannot store or read a value as its type
  | 'precondition_failed'; //    the resource is not in the state the caller expected (If-Match)

/**
 * Every kind of error the layers under the API raise on purpose. The API maps each kind to its
 * HTTP status and public code in one table; a new kind does not compile until that table has it.
 */
export type ErrorKind = DomainErrorKind | ApplicationErrorKind;

/** Base of the application layer's own errors: `kind` says what happened, never how to answer it. */
export abstract class ApplicationError extends Error {
  abstract readonly kind: ApplicationErrorKind;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}
