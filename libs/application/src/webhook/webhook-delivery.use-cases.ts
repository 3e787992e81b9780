import { Injectable } from '@nestjs/common';
import { Account, NotFoundError, WebhookEndpointNotFoundError } from '@petstore/domain';
import { visibleTo } from '../common/visible-to';
import { Clock, UnitOfWork } from '../ports';
import {
  WebhookDelivery,
  WebhookDeliveryQueue,
  WebhookDeliveryRepository,
  WebhookDeliverySwitch,
  WebhookEndpointRepository,
} from './webhook.ports';
import { DeliveryPendingError, WebhookDeliveryOffError } from './webhook.errors';

export class WebhookDeliveryNotFoundError extends NotFoundError {
  constructor(id: number) {
    super('Webhook delivery', id);
  }
}

/**
 * `POST /webhooks/endpoints/{id}/deliveries/{deliveryId}/retry`: a delivered or failed delivery is made pending
 * again, a pending one waiting for its back-off is made due, and its next attempt queued now, with the same event
 * body and `webhook-id` (a receiver that was down catches up; one that keeps ids sees a duplicate). A failure then
 * continues the retry schedule where it stopped, its back-off counted from that attempt (none is left after the
 * ninth attempt: failed again). A pending delivery whose attempt is due already (queued, or being made) is refused
 * (409): of two retries at once, one wins.
 */
@Injectable()
export class RetryWebhookDelivery {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly endpoints: WebhookEndpointRepository,
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly queue: WebhookDeliveryQueue,
    private readonly clock: Clock,
    private readonly sending: WebhookDeliverySwitch = new WebhookDeliverySwitch(),
  ) {}

  execute(endpointId: number, deliveryId: number, viewer: Account): Promise<WebhookDelivery> {
    return this.uow.run(async () => {
      const endpoint = await this.endpoints.findById(endpointId);
      visibleTo(endpoint, viewer, () => new WebhookEndpointNotFoundError(endpointId));
      // Before anything changes: a delivered one made pending again would wait for a send that never comes.
      if (!this.sending.on) throw new WebhookDeliveryOffError();
      const requeued = await this.deliveries.requeue(endpointId, deliveryId, () => this.clock.now());
      if (requeued === 'not_found') throw new WebhookDeliveryNotFoundError(deliveryId);
      if (requeued === 'pending') throw new DeliveryPendingError(deliveryId);
      // The job of the attempt it waited for (if any) finds the delivery moved on and makes none.
      await this.queue.schedule(requeued.id, null, requeued.nextAttemptAt ?? undefined);
      return requeued;
    });
  }
}
