import { NotFoundError } from '../common/domain-error';

export class MessageNotFoundError extends NotFoundError {
  constructor(id: string) {
    super('Message', id);
  }
}
