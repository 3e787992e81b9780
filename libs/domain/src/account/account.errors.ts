import { NotFoundError } from '../shared/domain-error';

export class ApiKeyNotFoundError extends NotFoundError {
  constructor(id: number) {
    super('API key', id);
  }
}
