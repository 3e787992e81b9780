import { randomUUID } from 'node:crypto';
import { Page, PageRequest, pageFromRows } from '../../src/common/page';
import { ConstraintViolationError } from '../../src/ports';
import {
  compareFeedPositions,
  EventLog,
  EventLogQuery,
  EventOutbox,
  EventPayloadsByKind,
  EVERY_ACCOUNT,
  FeedPage,
  FeedPosition,
  FeedRequest,
  LoggedEvent,
  OutboxEvent,
} from '../../src/events/event.ports';
import { FeedPositionTokens } from '../../src/events/event-bodies';
import { InMemoryDatabase } from './in-memory-database';

/** The outbox: an event, committed or rolled back with the change it reports. */
export class InMemoryEventOutbox extends EventOutbox {
  constructor(private readonly db: InMemoryDatabase) {
    super();
  }

  nextId(): string {
    return randomUUID();
  }

  async add(event: OutboxEvent): Promise<void> {
    this.db.assertInTransaction('EventOutbox.add');
    if (this.db.tables.webhookEvents.has(event.id)) {
      throw new ConstraintViolationError('unique', 'webhook_events_pkey', `duplicate key: event ${event.id}.`);
    }
    this.db.tables.webhookEvents.set(event.id, { ...structuredClone(event), seq: this.db.nextId('webhookEvents') });
  }

  async findById(id: string): Promise<OutboxEvent | null> {
    const event = this.db.tables.webhookEvents.get(id);
    if (!event) return null;
    const { seq: _seq, ...stored } = structuredClone(event);
    return stored;
  }
}

/** The event log as `webhook_events` keeps it: pings left out, newest first by `seq`. */
export class InMemoryEventLog extends EventLog {
  constructor(private readonly db: InMemoryDatabase) {
    super();
  }

  async list(query: EventLogQuery, { limit, afterId }: PageRequest): Promise<Page<LoggedEvent>> {
    const rows = this.events()
      .filter((event) => (afterId === undefined || event.seq < afterId) && matches(event, query))
      .sort((a, b) => b.seq - a.seq)
      .slice(0, limit + 1);
    return pageFromRows(rows, limit, (event) => event.seq);
  }

  async feed(query: EventLogQuery, { limit, after, before }: FeedRequest): Promise<FeedPage> {
    const all = this.events()
      .filter((event) => matches(event, query))
      .sort((a, b) => compareFeedPositions(a.position, b.position));
    if (before !== undefined) {
      const earlier = all.filter((event) => compareFeedPositions(event.position, before) < 0);
      return { items: earlier.slice(-limit), hasMore: earlier.length > limit };
    }
    const later = after === undefined ? all : all.filter((event) => compareFeedPositions(event.position, after) > 0);
    return { items: later.slice(0, limit), hasMore: later.length > limit };
  }

  async findById(id: string): Promise<LoggedEvent | null> {
    return this.events().find((event) => event.id === id) ?? null;
  }

  async purgeBatch(before: Date, limit: number): Promise<number> {
    const { webhookEvents, webhookDeliveries } = this.db.tables;
    const old = [...webhookEvents.values()].filter((event) => event.createdAt < before).slice(0, limit);
    for (const event of old) webhookEvents.delete(event.id);
    for (const [key, delivery] of webhookDeliveries)
      if (!webhookEvents.has(delivery.eventId)) webhookDeliveries.delete(key);
    return old.length;
  }

  private events(): Array<LoggedEvent & { position: FeedPosition }> {
    return [...this.db.tables.webhookEvents.values()]
      .filter(
        (event): event is OutboxEvent & { type: LoggedEvent['type']; seq: number } =>
          event.type !== 'ping' && event.endpointId === null,
      )
      .map((event) => ({ ...structuredClone(event), position: positionOf(event.seq) }));
  }
}

/**
 * The fake's transactions run one at a time, so every committed event is settled and commit order is `seq` order:
 * its transaction is stood for by its `seq` (PostgreSQL's is the writing transaction's id).
 */
export function positionOf(seq: number): FeedPosition {
  return { xact: String(seq), seq };
}

function matches(event: LoggedEvent, query: EventLogQuery): boolean {
  return (
    (query.subjectOwnerId === undefined ||
      event.subjectOwnerId === query.subjectOwnerId ||
      event.subjectOwnerId === EVERY_ACCOUNT) &&
    (!query.types?.length || query.types.includes(event.type)) &&
    (query.createdAfter === undefined || event.createdAt >= query.createdAfter) &&
    (query.createdBefore === undefined || event.createdAt < query.createdBefore)
  );
}

/** Positions in clear, `<xact>:<seq>` (the API's are encrypted: EventPositions), so that a test can read them. */
export class PlainFeedPositionTokens extends FeedPositionTokens {
  token({ xact, seq }: FeedPosition): string {
    return `${xact}:${seq}`;
  }
}

/**
 * The `data` of events: the resource's id, its version and what a test checks, one summary per kind of subject (as
 * the API has one view per kind): a new event type about a kind summarised already needs nothing here.
 */
export class SummaryEventPayloads extends EventPayloadsByKind {
  constructor() {
    super({
      Order: (order) => ({ id: order.id, petId: order.petId, complete: order.isComplete, version: order.version }),
      Pet: (pet) => ({
        id: pet.id,
        name: pet.name,
        categoryId: pet.categoryId,
        status: pet.status,
        version: pet.version,
      }),
      Category: (category) => ({ id: category.id, name: category.name, version: category.version }),
      InventoryItem: ({ petId, quantity, status, version }) => ({ petId, quantity, status, version }),
      Message: (message) => ({ id: message.id, status: message.status, version: message.version }),
    });
  }
}
