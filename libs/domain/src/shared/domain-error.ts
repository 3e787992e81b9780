/**
 * What kind of refusal a domain error is. The API maps each kind to one HTTP
 * status in one place (the global exception filter); the domain never speaks HTTP.
 */
export type DomainErrorKind =
  | 'invalid' //         the command itself is malformed (a value out of range)
  | 'not_found' //       the addressed resource does not exist (or is not yours)
  | 'unknown_reference' // the command names another resource that does not exist
  | 'conflict' //        the command conflicts with the current state
  | 'gone'; //           the operation no longer exists

/** Base of every refusal the domain and the use cases raise; `code` is stable and public. */
export abstract class DomainError extends Error {
  abstract readonly code: string;
  abstract readonly kind: DomainErrorKind;

  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** A value broke a domain limit (length, range). The field is named for the client. */
export class InvalidValueError extends DomainError {
  readonly code = 'validation_failed';
  readonly kind = 'invalid' as const;
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

export class NotFoundError extends DomainError {
  readonly code = 'not_found';
  readonly kind = 'not_found' as const;
  constructor(resource: string, id: number | string) {
    super(`${resource} ${id} does not exist.`);
  }
}
