import { Injectable } from '@nestjs/common';
import { Account, InvalidValueError, NotFoundError, WebhookEndpointNotFoundError } from '@petstore/domain';
import { visibleTo } from '../common/visible-to';
import { EventRetention } from '../events/event.ports';
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
 * Called once a request to send now (a retry, a recovery) is known to send something, inside its transaction, before
 * anything is queued: the HTTP layer spends the account's outbound budget there, and throws (429) past it, which
 * rolls the transaction back. A refusal before it (not found, `delivery_pending`, bad input) spends nothing.
 */
export type OutboundAdmission = () => Promise<void>;

const ADMIT_ALWAYS: OutboundAdmission = async () => undefined;

/**
 * `POST /webhooks/endpoints/{id}/deliveries/{deliveryId}/retry`: a delivered or failed delivery is made pending
 * again, a pending one waiting for its back-off is made due, and its next attempt queued now, with the same event
 * body and `webhook-id` (a receiver that was down catches up; one that keeps ids sees a duplicate). A failure then
 * continues the retry schedule where it stopped, its back-off counted from that attempt (none is left after the
 * ninth attempt: failed again). A pending delivery whose attempt is due already (queued, or being made) is refused
 * (409), before `admit`: of two retries at once, one wins, and the other spends nothing.
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

  execute(
    endpointId: number,
    deliveryId: number,
    viewer: Account,
    admit: OutboundAdmission = ADMIT_ALWAYS,
  ): Promise<WebhookDelivery> {
    return this.uow.run(async () => {
      const endpoint = await this.endpoints.findById(endpointId);
      visibleTo(endpoint, viewer, () => new WebhookEndpointNotFoundError(endpointId));
      // Before anything changes: a delivered one made pending again would wait for a send that never comes.
      if (!this.sending.on) throw new WebhookDeliveryOffError();
      const requeued = await this.deliveries.requeue(endpointId, deliveryId, () => this.clock.now());
      if (requeued === 'not_found') throw new WebhookDeliveryNotFoundError(deliveryId);
      if (requeued === 'pending') throw new DeliveryPendingError(deliveryId);
      await admit();
      // The job of the attempt it waited for (if any) finds the delivery moved on and makes none.
      await this.queue.schedule(requeued.id, null, requeued.nextAttemptAt ?? undefined);
      return requeued;
    });
  }
}

/** What `POST /webhooks/endpoints/{id}/recover` asks: from when, and whether delivered ones are sent again too. */
export interface RecoveryAsked {
  since: Date;
  all: boolean;
}

/** What a recovery did: how many deliveries it queued, and where a next call continues when there was more. */
export interface WebhookRecovery {
  queued: number;
  nextSince: Date | null;
}

/**
 * `POST /webhooks/endpoints/{id}/recover` (Svix calls it recover): after an outage of the receiver, one call sends
 * again what failed since a time, instead of a retry per delivery. The endpoint's deliveries created at or after
 * `since` whose last attempt failed (`failed`, or `pending` waiting for a back-off) are made due and their attempts
 * queued now, as a retry does each; with `all`, the delivered ones too. One whose attempt is due already (queued, or
 * being made) is left alone: a recovery never queues a delivery twice, and a second call at once finds nothing left.
 * Pings are not sent again. Bounded: `since` within the retention period of the events (older ones are deleted, with
 * their deliveries), and at most `LIMIT` deliveries a call, oldest first, in one transaction; `nextSince` then says
 * where to continue. One call is one unit of the outbound budget (`admit`), spent after the refusals (not found, bad
 * `since`, delivery off), whatever it finds to send.
 */
@Injectable()
export class RecoverWebhookDeliveries {
  /** The most deliveries one call queues (one transaction: 2 statements and one insert of their jobs). */
  static readonly LIMIT = 1000;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly endpoints: WebhookEndpointRepository,
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly queue: WebhookDeliveryQueue,
    private readonly clock: Clock,
    private readonly retention: EventRetention,
    private readonly sending: WebhookDeliverySwitch = new WebhookDeliverySwitch(),
  ) {}

  execute(
    endpointId: number,
    { since, all }: RecoveryAsked,
    viewer: Account,
    admit: OutboundAdmission = ADMIT_ALWAYS,
  ): Promise<WebhookRecovery> {
    return this.uow.run(async () => {
      visibleTo(await this.endpoints.findById(endpointId), viewer, () => new WebhookEndpointNotFoundError(endpointId));
      if (!this.sending.on) throw new WebhookDeliveryOffError();
      const now = this.clock.now();
      const days = this.retention.days;
      if (since.getTime() < now.getTime() - days * 24 * 3600 * 1000) {
        throw new InvalidValueError(
          'since',
          `since must be within the last ${days} days: older events are deleted with their deliveries ` +
            `(kept ${days} days on this deployment), so there is nothing older to send again.`,
        );
      }
      await admit();
      const request = { endpointId, since, all, limit: RecoverWebhookDeliveries.LIMIT };
      const { requeued, nextSince } = await this.deliveries.recoverSince(request, () => this.clock.now());
      // The jobs of the attempts some waited for (if any) find their deliveries moved on and make none.
      await this.queue.scheduleNow(requeued.map(({ id, nextAttemptAt }) => ({ deliveryId: id, due: nextAttemptAt })));
      return { queued: requeued.length, nextSince };
    });
  }
}
