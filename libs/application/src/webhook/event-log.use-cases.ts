import { Injectable } from '@nestjs/common';
import { Account, NotFoundError, WebhookEndpointNotFoundError } from '@petstore/domain';
import { Page, PageRequest } from '../common/page';
import { visibleTo } from '../common/visible-to';
import { Clock, UnitOfWork } from '../ports';
import {
  EventLog,
  EventLogQuery,
  EventRetention,
  LoggedEvent,
  WebhookDelivery,
  WebhookDeliveryQueue,
  WebhookDeliveryRepository,
  WebhookEndpointRepository,
} from './webhook.ports';
import { DeliveryPendingError } from './webhook.errors';

export class EventNotFoundError extends NotFoundError {
  constructor(id: string) {
    super('Event', id);
  }
}

export class WebhookDeliveryNotFoundError extends NotFoundError {
  constructor(id: number) {
    super('Webhook delivery', id);
  }
}

export type EventFilter = Omit<EventLogQuery, 'subjectOwnerId'>;

/**
 * `GET /events`: what a viewer may see of the log, as webhooks decide who receives what. A customer sees the
 * events about its own resources (its orders and messages); an administrator sees every event, including
 * `pet.status_changed` (about the store's pets, no customer's: administrators only, as its webhooks are).
 */
@Injectable()
export class EventQueries {
  constructor(private readonly log: EventLog) {}

  list(viewer: Account, filter: EventFilter, page: PageRequest): Promise<Page<LoggedEvent>> {
    return this.log.list(viewer.isAdmin ? filter : { ...filter, subjectOwnerId: viewer.id }, page);
  }

  /** Another customer's event (or a store event, for a customer) is not found, as a missing one is. */
  async get(id: string, viewer: Account): Promise<LoggedEvent> {
    const event = await this.log.findById(id);
    if (!event || !(viewer.isAdmin || event.subjectOwnerId === viewer.id)) throw new EventNotFoundError(id);
    return event;
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
  ) {}

  execute(endpointId: number, deliveryId: number, viewer: Account): Promise<WebhookDelivery> {
    return this.uow.run(async () => {
      const endpoint = await this.endpoints.findById(endpointId);
      visibleTo(endpoint, viewer, () => new WebhookEndpointNotFoundError(endpointId));
      const requeued = await this.deliveries.requeue(endpointId, deliveryId, () => this.clock.now());
      if (requeued === 'not_found') throw new WebhookDeliveryNotFoundError(deliveryId);
      if (requeued === 'pending') throw new DeliveryPendingError(deliveryId);
      // The job of the attempt it waited for (if any) finds the delivery moved on and makes none.
      await this.queue.schedule(requeued.id, null, requeued.nextAttemptAt ?? undefined);
      return requeued;
    });
  }
}

/**
 * Scheduled: deletes the events older than the retention period (and their deliveries), a bounded batch per
 * statement, each its own transaction, so that no run holds locks or bloats one transaction with a million rows.
 */
@Injectable()
export class PurgeEvents {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly log: EventLog,
    private readonly retention: EventRetention,
    private readonly clock: Clock,
  ) {}

  async execute(): Promise<{ purged: number }> {
    const before = new Date(this.clock.now().getTime() - this.retention.days * 24 * 3600 * 1000);
    let purged = 0;
    for (let batch = 0; batch < this.retention.maxBatches; batch++) {
      const deleted = await this.uow.run(() => this.log.purgeBatch(before, this.retention.batchSize));
      purged += deleted;
      if (deleted < this.retention.batchSize) break;
    }
    return { purged };
  }
}
