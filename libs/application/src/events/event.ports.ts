import { eventDefinition, EventSubjectKinds, EventSubjects, EventType, WebhookEventType } from '@petstore/domain';
import { Page, PageRequest } from '../common/page';

/*
 * Events: the facts the slices record (an order placed, a pet's status changed, a message delivered), kept in one
 * log that `GET /events` reads and webhooks fan out from. Each type of fact is declared once, in the domain's
 * EVENT_CATALOGUE (libs/domain/src/events); what follows here is derived from it. The slices know only
 * EventRecorder; consumers (webhooks) are registered with EventConsumers and the events area knows nothing of them.
 */

export type { EventSubjects, StockSubject } from '@petstore/domain';

/** A type of fact (EVENT_TYPES), or a webhook endpoint's `ping` (kept in the same table, never listed). */
export type EventName = WebhookEventType | 'ping';

/** One event as the outbox holds it: the exact body every endpoint receives, on every attempt. */
export interface OutboxEvent {
  /** A UUID: the `webhook-id` header, the same on every attempt. */
  id: string;
  type: EventName;
  /**
   * The account whose resource the event is about; null for the store's own that only administrators see
   * (audience `administrators`); EVERY_ACCOUNT for the catalogue's (audience `everyone`), which every account sees.
   */
  subjectOwnerId: number | null;
  /** Set for a ping: the one endpoint it goes to. */
  endpointId: number | null;
  /** `{"type", "timestamp", "data"}` as JSON text. */
  body: string;
  createdAt: Date;
}

/**
 * The subject owner of the catalogue's events (audience `everyone`): every account sees them. No account has this
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

/**
 * Whose resource a fact is about, by its type's audience: `GET /events` and webhooks show it to that account (and
 * administrators); EVERY_ACCOUNT for the catalogue's, null for the store's own (administrators only).
 */
export function subjectOwnerOf<T extends EventType>(type: T, subject: EventSubjects[T]): number | null {
  const { audience } = eventDefinition(type);
  if (audience === 'everyone') return EVERY_ACCOUNT;
  if (audience === 'administrators') return null;
  // EventDefinition allows an account's audience only for a subject that has an owner.
  return (subject as { ownerId: number }).ownerId;
}

/**
 * How one kind of subject is shown (its payload schema's view), for each kind: the API's views, the tests' summaries.
 * One entry per kind, not per event type: a new event type about a kind already shown needs none.
 */
export type EventSubjectViews<V> = { [K in keyof EventSubjectKinds]: (subject: EventSubjectKinds[K]) => V };

/**
 * How the API shows each subject: the `data` of an event is exactly that. Declared once, statically, by the
 * composition root (a view per subject kind: EventSubjectViews); the tests use a summary.
 */
export abstract class EventPayloads {
  abstract data<T extends WebhookEventType>(type: T, subject: EventSubjects[T]): unknown;
}

/** EventPayloads by a view per subject kind: an event's `data` is its subject in its type's kind's view. */
export class EventPayloadsByKind extends EventPayloads {
  constructor(private readonly views: EventSubjectViews<unknown>) {
    super();
  }

  data<T extends WebhookEventType>(type: T, subject: EventSubjects[T]): unknown {
    // TypeScript does not correlate the type's kind with its view's parameter: EventSubjects says they match.
    const view = this.views[eventDefinition(type).subject] as (subject: EventSubjects[T]) => unknown;
    return view(subject);
  }
}

/**
 * The port a use case records a fact with, inside its `UnitOfWork.run`: the event commits with the change or not at
 * all (a rolled-back change records nothing, a committed one is never lost). Required wherever a use case changes
 * something events report: there is no use case that records nothing because the port was not wired.
 */
export abstract class EventRecorder {
  abstract record<T extends WebhookEventType>(type: T, subject: EventSubjects[T]): Promise<void>;
}
