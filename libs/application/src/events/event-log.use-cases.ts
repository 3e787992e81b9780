import { Injectable } from '@nestjs/common';
import { Account, NotFoundError, WebhookAudience } from '@petstore/domain';
import { Page, PageRequest } from '../common/page';
import { Clock, UnitOfWork } from '../ports';
import { EventLog, EventLogQuery, EventRetention, FeedPage, FeedRequest, LoggedEvent } from './event.ports';

export class EventNotFoundError extends NotFoundError {
  constructor(id: string) {
    super('Event', id);
  }
}

export type EventFilter = Omit<EventLogQuery, 'subjectOwnerId'>;

/**
 * `GET /events`: what a viewer may see of the log, as webhooks decide who receives what (WebhookAudience.sees). A
 * customer sees the events about its own resources (its orders and messages) and the catalogue's (audience
 * `everyone`: the store's pets, categories and stock, which every account may read); an administrator sees every
 * event, including those of audience `administrators` (a pet's status changed: administrators only, as its webhooks
 * are).
 */
@Injectable()
export class EventQueries {
  constructor(private readonly log: EventLog) {}

  list(viewer: Account, filter: EventFilter, page: PageRequest): Promise<Page<LoggedEvent>> {
    return this.log.list(this.visible(viewer, filter), page);
  }

  /** The same events in commit order, a page after (or before) a position: what a consumer catches up with. */
  feed(viewer: Account, filter: EventFilter, request: FeedRequest): Promise<FeedPage> {
    return this.log.feed(this.visible(viewer, filter), request);
  }

  /** Another customer's event (or an administrators' one, for a customer) is not found, as a missing one is. */
  async get(id: string, viewer: Account): Promise<LoggedEvent> {
    const event = await this.log.findById(id);
    if (!event || !WebhookAudience.sees({ id: viewer.id, isAdmin: viewer.isAdmin }, event.type, event.subjectOwnerId)) {
      throw new EventNotFoundError(id);
    }
    return event;
  }

  /** A customer's filter cannot widen what it sees. */
  private visible(viewer: Account, filter: EventFilter): EventLogQuery {
    return viewer.isAdmin ? filter : { ...filter, subjectOwnerId: viewer.id };
  }
}

/**
 * Scheduled: deletes the events older than the retention period (and their deliveries), a bounded batch per
 * statement, each its own transaction, so that no run holds locks or bloats one transaction with a million rows;
 * after each batch it rests for a share of the time the batch took (EventRetention.restRatio), so that a long purge
 * does not take a database core from the requests for its whole length.
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
      const started = this.clock.now().getTime();
      const deleted = await this.uow.run(() => this.log.purgeBatch(before, this.retention.batchSize));
      purged += deleted;
      if (deleted < this.retention.batchSize) break;
      const rest = (this.clock.now().getTime() - started) * this.retention.restRatio;
      if (rest >= 1) await new Promise((resolve) => setTimeout(resolve, rest));
    }
    return { purged };
  }
}
