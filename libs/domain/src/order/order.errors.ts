import { DomainError, NotFoundError } from '../common/domain-error';

export class OrderNotFoundError extends NotFoundError {
  constructor(id: number) {
    super('Order', id);
  }
}

/** A completed order stays completed and cannot be cancelled (invariant I5). */
export class OrderAlreadyCompleteError extends DomainError {
  readonly kind = 'order_already_complete' as const;
  constructor(readonly orderId: number) {
    super(`Order ${orderId} is already complete; a completed order cannot be completed again or cancelled.`);
  }
}
