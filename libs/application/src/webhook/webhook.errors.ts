import { ApplicationError } from '../common/application-error';

/** A retry asked for a delivery that is still pending: its next attempt is queued already. */
export class DeliveryPendingError extends ApplicationError {
  readonly kind = 'delivery_pending' as const;
  constructor(readonly deliveryId: number) {
    super(`Delivery ${deliveryId} is still pending: its next attempt is queued already.`);
  }
}
