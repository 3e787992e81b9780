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

/**
 * A ping or a retry asked of a process that sends no webhooks (WEBHOOKS_DELIVERY=off: a restored copy of the
 * database): nothing would be sent, so nothing is queued nor changed.
 */
export class WebhookDeliveryOffError extends ApplicationError {
  readonly kind = 'webhook_delivery_off' as const;
  constructor() {
    super(
      'Webhook delivery is off on this deployment (a restored copy or a test instance): nothing is sent to any ' +
        'endpoint, so pings, retries and recoveries are refused; deliveries stay as they are.',
    );
  }
}
