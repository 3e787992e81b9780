/**
 * What a domain refusal means, one name per refusal. The domain never speaks HTTP: the API maps
 * each kind to its status and public code in one table (apps/api/src/common/errors).
 * A new refusal adds its kind here, and the compiler then asks the API table for its row.
 */
export type DomainErrorKind =
  | 'invalid' //                   the command itself is malformed (a value out of range)
  | 'not_found' //                 the addressed resource does not exist (or is not yours)
  | 'unknown_category' //          the command names a category that does not exist
  | 'unknown_pet' //               the command names a pet that does not exist
  | 'category_name_taken'
  | 'category_in_use'
  | 'pet_not_available'
  | 'invalid_status_transition'
  | 'pet_has_open_orders'
  | 'insufficient_stock'
  | 'stock_limit_exceeded'
  | 'order_already_complete'
  | 'order_already_cancelled' // cancelled or expired: a record that no longer changes
  | 'hold_limit_reached' //       a customer's open orders would hold more units than allowed
  | 'too_many_keys' //            an account already has the most active API keys allowed
  | 'too_many_endpoints' //       an account already has the most webhook endpoints allowed
  | 'webhook_url_taken' //        an account already has a webhook endpoint on that URL
  | 'insufficient_scope' //       a key asks for more than its scopes allow (creating a key with scopes it lacks)
  // a webhook URL events may not be sent to (scheme, private address); the generator adds new kinds below
  | 'invalid_webhook_url';

/** Base of every refusal the domain raises; `kind` says which, and is stable. */
export abstract class DomainError extends Error {
  abstract readonly kind: DomainErrorKind;

  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** A value broke a domain limit (length, range). The field is named for the client. */
export class InvalidValueError extends DomainError {
  readonly kind = 'invalid' as const;
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

export class NotFoundError extends DomainError {
  readonly kind = 'not_found' as const;
  constructor(resource: string, id: number | string) {
    super(`${resource} ${id} does not exist.`);
  }
}
