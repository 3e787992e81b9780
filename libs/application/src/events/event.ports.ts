import { Category, Message, Order, Pet, PetStatus, WebhookEventType } from '@petstore/domain';
import { Page, PageRequest } from '../common/page';

/*
 * Events: the facts the slices record (an order placed, a pet's status changed, a message delivered), kept in one
 * log that `GET /events` reads and webhooks fan out from. The slices know only EventRecorder; webhooks subscribe
 * (EventConsumers) and the events area knows nothing of them.
 */

/** A type of fact (WEBHOOK_EVENT_TYPES), or a webhook endpoint's `ping` (kept in the same table, never listed). */
export type EventName = WebhookEventType | 'ping';

/** One event as the outbox holds it: the exact body every endpoint receives, on every attempt. */
export interface OutboxEvent {
  /** A UUID: the `webhook-id` header, the same on every attempt. */
  id: string;
  type: EventName;
  /**
   * The account whose resource the event is about; null for the store's own that only administrators see
   * (`pet.status_changed`); EVERY_ACCOUNT for the catalogue's, which every account sees.
   */
  subjectOwnerId: number | null;
  /** Set for a ping: the one endpoint it goes to. */
  endpointId: number | null;
  /** `{"type", "timestamp", "data"}` as JSON text. */
  body: string;
  createdAt: Date;
}

/**
 * The subject owner of the catalogue's events (CATALOGUE_EVENT_TYPES): every account sees them. No account has this
 * id (ids start at 1), so the log keeps them under it and reads a customer's page as two index ranges, its own id's
 * and this one's, each in `seq` order (a NULL owner shared with administrators' events, filtered by type, would
 * read those too).
 */
export const EVERY_ACCOUNT = 0;

/**
 * The outbox, which is also the event log (`GET /events`): `add` must run inside the `UnitOfWork.run` of the
 * change the event reports, so that the event commits with the change or not at all.
 */
export abstract class EventOutbox {
  /** A new, random identity (a UUID) for an event. */
  abstract nextId(): string;
  abstract add(event: OutboxEvent): Promise<void>;
  abstract findById(id: string): Promise<OutboxEvent | null>;
}

/**
 * Where an event is in the log's commit order: the id of the transaction that wrote it (PostgreSQL's `xid8`, as
 * decimal text: 64 bits) and its `seq`. Events are in commit order by (xact, seq) once settled: listed only when
 * every transaction older than theirs has ended, so that nothing can later appear before a position handed out.
 */
export interface FeedPosition {
  xact: string;
  seq: number;
}

/** An event as the log keeps it: `seq` orders the log (a bigint identity, increasing with every event). */
export interface LoggedEvent extends OutboxEvent {
  type: WebhookEventType;
  seq: number;
  /**
   * Its place in the commit-order feed, once settled (every transaction older than its own has ended: at once, but
   * for writers still in flight); null before. Every event of a feed page has one.
   */
  position: FeedPosition | null;
}

/**
 * A page of the commit-order feed: the `limit` settled events just after `after` (forward, the default, from the
 * start of the log without it), or just before `before` (backward); either way oldest first.
 */
export interface FeedRequest {
  limit: number;
  after?: FeedPosition;
  before?: FeedPosition;
}

/** A feed page: its events oldest first, each with its position; `hasMore`: more settled events in its direction. */
export interface FeedPage {
  items: Array<LoggedEvent & { position: FeedPosition }>;
  hasMore: boolean;
}

/** Orders two positions as the feed does: by transaction, then by `seq`. */
export function compareFeedPositions(a: FeedPosition, b: FeedPosition): number {
  const byXact = BigInt(a.xact) - BigInt(b.xact);
  return byXact !== 0n ? (byXact < 0n ? -1 : 1) : a.seq - b.seq;
}

/** Which events `GET /events` reads (pings are never in the log's lists). */
export interface EventLogQuery {
  /**
   * Only the events about this account's resources, and those of EVERY_ACCOUNT (the catalogue's, which every
   * account sees); undefined for every event (an administrator).
   */
  subjectOwnerId?: number;
  /** Only these types (any of them); undefined or empty for every type. */
  types?: readonly WebhookEventType[];
  /** Only events created at or after this time. */
  createdAfter?: Date;
  /** Only events created before this time. */
  createdBefore?: Date;
}

/**
 * The log of every event (the outbox's table, read): newest first by `seq`, a keyset page at a time
 * (`afterId` is the last `seq` seen; the next page is below it), or in commit order (`feed`). Kept for a retention
 * period, then purged.
 */
export abstract class EventLog {
  abstract list(query: EventLogQuery, page: PageRequest): Promise<Page<LoggedEvent>>;
  /**
   * The feed in commit order (FeedRequest): settled events only, so that a consumer paging forward from the last
   * position it processed never misses one, even one whose transaction committed after later-numbered ones.
   */
  abstract feed(query: EventLogQuery, request: FeedRequest): Promise<FeedPage>;
  /** An event (not a ping), or null. */
  abstract findById(id: string): Promise<LoggedEvent | null>;
  /** Deletes at most `limit` events (and their deliveries) created before `before`; returns how many. */
  abstract purgeBatch(before: Date, limit: number): Promise<number>;
}

/** How long events are kept (EVENT_RETENTION_DAYS), bound by value in the composition root. */
export class EventRetention {
  static readonly DEFAULT_DAYS = 30;
  /** Events deleted per statement: each statement is short, its locks few; a run loops until done. */
  static readonly DEFAULT_BATCH = 10_000;

  constructor(
    readonly days = EventRetention.DEFAULT_DAYS,
    readonly batchSize = EventRetention.DEFAULT_BATCH,
    /** Batches one run deletes at most (the next run continues): 200 × 10,000 = 2,000,000 events. */
    readonly maxBatches = 200,
    /**
     * How long the purge rests after a batch, as a share of the time the batch took (2: twice as long): a purge of a
     * day's events (a million, after the purge was down or the retention shortened) then takes at most a third of a
     * database core, not all of it, while orders run; about a minute for the million at 30,000,000 events. Measured
     * there (npm run bench, 10,000,000 orders): the orders' p99 1.54-1.63x with a rest as long as the batch,
     * 1.29x and 1.50x with twice as long (the target is 1.5x). The hourly run's few batches hardly notice.
     */
    readonly restRatio = 2,
  ) {}
}

/** A pet's stock as `inventory.changed` reports it (the stock's StockLevel: events import no slice). */
export interface StockSubject {
  petId: number;
  quantity: number;
  status: PetStatus;
  /** The entry's version after the change (Stock.version). */
  version: number;
}

/** What each type of fact is about: the aggregate a use case records it with. */
export interface EventSubjects {
  'order.placed': Order;
  'order.completed': Order;
  'order.cancelled': Order;
  'pet.status_changed': Pet;
  'message.delivered': Message;
  /** The catalogue's (CATALOGUE_EVENT_TYPES): every account sees them. A deleted resource as it was. */
  'pet.created': Pet;
  'pet.updated': Pet;
  'pet.deleted': Pet;
  'category.created': Category;
  'category.updated': Category;
  'category.deleted': Category;
  'inventory.changed': StockSubject;
}

/** Every type of fact has its subject (a new type in WEBHOOK_EVENT_TYPES does not compile until it has one). */
export type EventSubjectMap<V> = { [T in WebhookEventType]: (subject: EventSubjects[T]) => V };

/** Whose resource each fact is about: `GET /events` and webhooks show it to that account (and administrators). */
export const EVENT_SUBJECT_OWNERS: EventSubjectMap<number | null> = {
  'order.placed': (order) => order.ownerId,
  'order.completed': (order) => order.ownerId,
  'order.cancelled': (order) => order.ownerId,
  'pet.status_changed': () => null,
  'message.delivered': (message) => message.ownerId,
  'pet.created': () => EVERY_ACCOUNT,
  'pet.updated': () => EVERY_ACCOUNT,
  'pet.deleted': () => EVERY_ACCOUNT,
  'category.created': () => EVERY_ACCOUNT,
  'category.updated': () => EVERY_ACCOUNT,
  'category.deleted': () => EVERY_ACCOUNT,
  'inventory.changed': () => EVERY_ACCOUNT,
};

/**
 * How the API shows each subject: the `data` of an event is exactly that. Declared once, statically, by the
 * composition root (one entry per event type); the tests use a summary.
 */
export abstract class EventPayloads {
  abstract data<T extends WebhookEventType>(type: T, subject: EventSubjects[T]): unknown;
}

/**
 * The port a use case records a fact with, inside its `UnitOfWork.run`: the event commits with the change or not at
 * all (a rolled-back change records nothing, a committed one is never lost). Required wherever a use case changes
 * something events report: there is no use case that records nothing because the port was not wired.
 */
export abstract class EventRecorder {
  abstract record<T extends WebhookEventType>(type: T, subject: EventSubjects[T]): Promise<void>;
}
