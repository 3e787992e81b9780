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
