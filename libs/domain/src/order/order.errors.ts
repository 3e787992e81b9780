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

/** An order that was cancelled or expired is a record: it cannot be cancelled again, nor completed (I5). */
export class OrderAlreadyCancelledError extends DomainError {
  readonly kind = 'order_already_cancelled' as const;
  constructor(
    readonly orderId: number,
    readonly how: 'cancelled' | 'expired',
  ) {
    super(
      how === 'expired'
        ? `Order ${orderId} has expired (its hold ran out); it cannot be cancelled or completed.`
        : `Order ${orderId} is already cancelled; it cannot be cancelled again or completed.`,
    );
  }
}
