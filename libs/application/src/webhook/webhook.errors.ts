import { ApplicationError } from '../common/application-error';

/** A retry asked for a pending delivery whose attempt is due already: queued, or being made now. */
export class DeliveryPendingError extends ApplicationError {
  readonly kind = 'delivery_pending' as const;
  constructor(readonly deliveryId: number) {
    super(
      `Delivery ${deliveryId} is being sent now: its attempt is queued or under way; ` +
        'list the deliveries to see its outcome, then retry if it failed.',
    );
  }
}
