import { DomainError, NotFoundError } from '../common/domain-error';

export class ApiKeyNotFoundError extends NotFoundError {
  constructor(id: number) {
    super('API key', id);
  }
}

export class TooManyApiKeysError extends DomainError {
  readonly kind = 'too_many_keys' as const;
  constructor(max: number) {
    super(`An account holds at most ${max} active API keys; revoke one first.`);
  }
}

/** A key acting beyond its scopes: here, creating a key with a scope the creating key does not have. */
export class InsufficientScopeError extends DomainError {
  readonly kind = 'insufficient_scope' as const;
  constructor(readonly needed: string) {
    super(`This API key does not have the \`${needed}\` scope, so it cannot grant it to a new key.`);
  }
}
