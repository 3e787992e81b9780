import { WebhookEndpoint, WebhookEventType } from '@petstore/domain';
import { PageRequest, Page } from '../common/page';
import type { EventName, FeedPosition } from '../events/event.ports';

export interface WebhookSubscriber {
  endpoint: WebhookEndpoint;
  ownerIsAdmin: boolean;
}

export abstract class WebhookEndpointRepository {
  /** The owner's endpoints; exact under the owner's row lock (`AccountRepository.lock`: the 10-endpoint rule). */
  abstract countByOwner(ownerId: number): Promise<number>;
  /** A new endpoint's id, taken from the table's sequence before the endpoint is created (never reused). */
  abstract nextId(): Promise<number>;
  /** Stores a new endpoint. */
  abstract add(endpoint: WebhookEndpoint): Promise<void>;
  abstract findById(id: number): Promise<WebhookEndpoint | null>;
  /** Finds and locks the endpoint's row until the transaction ends (inside UnitOfWork.run only). */
  abstract lockById(id: number): Promise<WebhookEndpoint | null>;
  /** lockById, with the owner's role: its row locked until the transaction ends (edits and rotations queue). */
  abstract lockWithOwner(id: number): Promise<WebhookSubscriber | null>;
  /**
   * Writes a stored endpoint's changes (URL, events, secrets, disabledAt). `resetHealth` ends its failing streak
   * (an endpoint enabled again, or moved to another URL, starts afresh instead of being disabled at the next run).
   */
  abstract update(endpoint: WebhookEndpoint, options: { resetHealth: boolean }): Promise<void>;
  /** The owner's endpoints, ascending by id. */
  abstract listByOwner(ownerId: number, page: PageRequest): Promise<Page<WebhookEndpoint>>;
  abstract delete(id: number): Promise<void>;
  /**
   * Enabled endpoints subscribed to `type` whose owner is `subjectOwnerId` or an administrator, or any owner for a
   * catalogue event (CATALOGUE_EVENT_TYPES): the candidates; WebhookAudience decides.
   */
  abstract findSubscribers(type: WebhookEventType, subjectOwnerId: number | null): Promise<WebhookSubscriber[]>;
  /** Whether any such candidate exists (one indexed probe: most changes have no subscriber at all). */
  abstract hasSubscribers(type: WebhookEventType, subjectOwnerId: number | null): Promise<boolean>;
  /** A delivered attempt clears the failing streak; a failed one starts it if none runs. */
  abstract recordHealth(endpointId: number, delivered: boolean, at: Date): Promise<void>;
  /** Disables the enabled endpoints failing since before `since`; returns how many. */
  abstract disableFailingSince(since: Date, now: Date): Promise<number>;
}

/** A delivery's states (the table's CHECK in its migration lists the same). */
export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/** One event to one endpoint, as `GET /webhooks/endpoints/{id}/deliveries` shows it. */
export interface WebhookDelivery {
  id: number;
  eventId: string;
  type: EventName;
  endpointId: number;
  status: WebhookDeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: Date | null;
  createdAt: Date;
  deliveredAt: Date | null;
}

/** What an attempt needs, read without a lock. */
export interface WebhookAttemptTarget {
  delivery: WebhookDelivery;
  url: string;
  secret: string;
  /** The secret before the last rotation, and until when it signs too. */
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  endpointDisabled: boolean;
  /** Whether the endpoint's deliveries were failing when read (a delivery then ends the streak). */
  endpointFailing: boolean;
  /** The event's body as stored (EventBodies makes what is sent of it). */
  body: string;
  /** The event's place in the commit-order feed; null for a ping, which is not in the feed. */
  position: FeedPosition | null;
  /**
   * Whether that place is final: every transaction that began writing before the event's own has ended, so the feed
   * lists it (what `GET /events?order=commit` waits for). Always true for a ping.
   */
  settled: boolean;
}

export interface WebhookAttemptOutcome {
  deliveryId: number;
  /** The attempt's number (1 for the first). */
  attempt: number;
  /** Attempts recorded before this one: nothing is recorded if another run changed that meanwhile. */
  previousAttempts: number;
  status: WebhookDeliveryStatus;
  statusCode: number | null;
  error: string | null;
  nextAttemptAt: Date | null;
  at: Date;
}

/** What operators watch of the webhook queue (the metrics' gauges). */
export interface WebhookQueueStats {
  /** Deliveries not yet delivered nor given up: due now, or waiting for their next attempt. */
  pending: number;
  /** Of those, the ones whose attempts so far failed (waiting for a retry, or due again). */
  retrying: number;
  /** The earliest `nextAttemptAt` of a pending delivery; null when none is pending. */
  earliestDueAt: Date | null;
  /** Endpoints whose deliveries fail now (failing since some time, not disabled yet). */
  failingEndpoints: number;
}

export abstract class WebhookDeliveryRepository {
  /** One statement, on partial indexes of the pending deliveries and the failing endpoints: cheap on every scrape. */
  abstract queueStats(): Promise<WebhookQueueStats>;
  /**
   * Creates the deliveries of an event not created yet, their first attempt due at `dueAt` (`now` unless the
   * account's outbound budget deferred them); returns the new ones' ids.
   */
  abstract createFor(eventId: string, endpointIds: number[], now: Date, dueAt?: Date): Promise<number[]>;
  abstract findTarget(deliveryId: number): Promise<WebhookAttemptTarget | null>;
  /**
   * Records an attempt, unless another run recorded this attempt (or settled the delivery)
   * meanwhile: false then, and the caller schedules nothing.
   */
  abstract recordAttempt(outcome: WebhookAttemptOutcome): Promise<boolean>;
  /** An endpoint's deliveries, newest first: `afterId` is the last id seen, the next page is below it. */
  abstract listForEndpoint(endpointId: number, page: PageRequest): Promise<Page<WebhookDelivery>>;
  /**
   * Makes a delivery of the endpoint due `now()`: a settled (delivered or failed) one pending again, a pending one
   * waiting for its back-off (`nextAttemptAt` after `now()`) due at once. 'pending' when its attempt is due already
   * (queued, or being made: nothing changes), 'not_found' when the endpoint has no such delivery. Under the
   * delivery's row lock, `now()` read once it is held: of two concurrent requeues, one wins and the other finds the
   * attempt due (the winner's `now()` is not after the loser's).
   */
  abstract requeue(
    endpointId: number,
    deliveryId: number,
    now: () => Date,
  ): Promise<WebhookDelivery | 'pending' | 'not_found'>;
  /**
   * Makes due `now()` the endpoint's deliveries created at or after `since` whose last attempt failed: `failed` ones
   * and `pending` ones waiting for their back-off (`nextAttemptAt` after `now()`); with `all`, `delivered` ones too.
   * Never a ping's, never one whose attempt is due already (queued, or being made). Oldest first (by `createdAt`,
   * then id), at most `limit` of them, in the caller's transaction: the rows looked at are locked first and `now()`
   * read once they are held, so that of two recoveries (or a recovery and a retry) at once, a delivery is made due
   * by one only. `nextSince` is where a next call continues (inclusive) when more than `limit` were looked at, else
   * null: the batch never ends inside a run of deliveries created at the same instant, unless that run alone fills it.
   */
  abstract recoverSince(request: RecoveryRequest, now: () => Date): Promise<RecoveredDeliveries>;
}

/** What `WebhookDeliveryRepository.recoverSince` looks at. */
export interface RecoveryRequest {
  endpointId: number;
  /** The earliest `createdAt` of a delivery recovered (inclusive). */
  since: Date;
  /** `delivered` deliveries too, not only those whose last attempt failed. */
  all: boolean;
  /** The most deliveries one call looks at. */
  limit: number;
}

/** The deliveries a recovery made due, each with its new `nextAttemptAt` (the `due` of its job). */
export interface RecoveredDeliveries {
  requeued: Array<{ id: number; nextAttemptAt: Date }>;
  /** Where the next call continues (its `since`) when there was more to look at; null when this was the end. */
  nextSince: Date | null;
}

/**
 * A recovery's batch from up to `limit + 1` deliveries read oldest first: the first `limit`, and the `createdAt` a
 * next call continues from when there was one more. The deliveries created at that same instant are left to the next
 * call (it takes them all, `since` being inclusive) unless they fill the batch alone, so that none is recovered twice.
 */
export function recoveryBatch<T>(
  rows: readonly T[],
  limit: number,
  createdAtOf: (row: T) => Date,
): { batch: T[]; nextSince: Date | null } {
  if (rows.length <= limit) return { batch: [...rows], nextSince: null };
  const nextSince = createdAtOf(rows[limit]);
  let end = limit;
  while (end > 0 && createdAtOf(rows[end - 1]).getTime() === nextSince.getTime()) end--;
  return { batch: rows.slice(0, end === 0 ? limit : end), nextSince };
}

/**
 * Each account's outbound budget for the deliveries fanned out to its endpoints (issue 48, item 8): at most `perMinute`
 * a minute on average, with a burst of one minute's worth, shared by every worker process (it is kept in the store, so
 * two instances cannot each spend it). Beyond it an account's deliveries are not dropped but start later: `reserve`
 * takes each account's deliveries from its budget and answers how long they must wait (0 within the budget), for
 * every account of a fan-out at once. A generic cell
 * rate: the account's row holds the theoretical arrival time of its next delivery, on the store's clock (one clock for
 * every instance, whatever theirs say). Run inside the fan-out's transaction, so a fan-out that rolls back spends
 * nothing.
 */
export abstract class WebhookOutboundBudget {
  /** Takes each account's deliveries (`counts`: account id → deliveries); answers each account's wait in ms. */
  abstract reserve(counts: ReadonlyMap<number, number>): Promise<Map<number, number>>;
}

/** The per-account outbound rate the fan-out keeps to (WEBHOOK_DELIVERIES_PER_MINUTE; 0 = no budget). */
export class WebhookOutboundSettings {
  constructor(readonly perMinute = 6000) {}

  /** The time one delivery takes from the budget; null when there is no budget. */
  get intervalMs(): number | null {
    return this.perMinute > 0 ? 60_000 / this.perMinute : null;
  }

  /**
   * How long `count` deliveries just taken must wait, given how far the account's theoretical arrival time now stands
   * ahead of the present (`aheadMs`, after them): none within a burst of one minute's worth, else until the budget has
   * caught up with them. The stores keep the arrival time as max(stored, now) + count × interval, in one statement.
   */
  delayMs(aheadMs: number, count: number): number {
    const interval = this.intervalMs;
    if (interval === null) return 0;
    return Math.max(0, Math.round(aheadMs - count * interval - 60_000));
  }
}

/** The fan-out jobs (pg-boss), one per event some endpoint may receive: sent inside the event's transaction. */
export abstract class WebhookFanOutQueue {
  abstract schedule(eventId: string): Promise<void>;
}

/** The delivery jobs (pg-boss): `schedule` runs inside the transaction that records why. */
export abstract class WebhookDeliveryQueue {
  /**
   * A job for the delivery's next attempt, run at `at` (null: at once). `due` is the delivery's `nextAttemptAt` the
   * job is for: when the delivery has moved on (a redelivery made the attempt earlier), the job makes none.
   */
  abstract schedule(deliveryId: number, at: Date | null, due?: Date): Promise<void>;
  /** Jobs for several deliveries' attempts at once (a fan-out's), in one statement where the queue can. */
  abstract scheduleMany(deliveryIds: number[], at: Date | null, due?: Date): Promise<void>;
  /** A job for each delivery's next attempt, run at once (a recovery): one write for all of them. */
  abstract scheduleNow(jobs: ReadonlyArray<{ deliveryId: number; due: Date }>): Promise<void>;
}

export abstract class WebhookSecrets {
  /** `whsec_` + base64 of fresh random bytes (24 or more). */
  abstract generate(): string;
}

/** How long a rotated-out secret keeps signing (Standard Webhooks lets a receiver accept either meanwhile). */
export class WebhookRotationSettings {
  static readonly DEFAULT_WINDOW_SECONDS = 24 * 3600;

  constructor(readonly windowSeconds = WebhookRotationSettings.DEFAULT_WINDOW_SECONDS) {}
}

/** Refuses a URL events may not go to (scheme; an address inside the network, resolved now). */
export abstract class WebhookUrlPolicy {
  /** Throws WebhookUrlRefusedError. */
  abstract check(url: string): Promise<void>;
}

export interface WebhookRequest {
  url: string;
  eventId: string;
  body: string;
  /** Each signs the attempt (`webhook-signature: v1,<first> v1,<second>`): the secret, then a rotated-out one. */
  secrets: string[];
  timeoutMs: number;
}

/**
 * Why an attempt failed, as a delivery's `lastError` shows it: a category, never a host, an address
 * or a library's text (those go to the operator's log). `forbidden_address` covers a host that does
 * not resolve as well as one that resolves to a forbidden address: the two are not told apart.
 */
export const WEBHOOK_ERROR_CATEGORIES = [
  'timeout',
  'connection_refused',
  'connection_error',
  'tls_error',
  'http_status',
  'forbidden_address',
  'invalid_url',
  'endpoint_disabled',
  'given_up',
] as const;
export type WebhookErrorCategory = (typeof WEBHOOK_ERROR_CATEGORIES)[number];

/** The HTTP status received, or why none was (refused address, timeout, connection error). */
export interface WebhookResponse {
  statusCode: number | null;
  error: WebhookErrorCategory | null;
}

/** Signs (Standard Webhooks headers) and POSTs one attempt; never throws for the receiver's failures. */
export abstract class WebhookSender {
  abstract send(request: WebhookRequest): Promise<WebhookResponse>;
}

/** Delivery settings, bound by value in the composition root. */
/**
 * Whether this process sends webhooks (WEBHOOKS_DELIVERY): off, on a restored copy of the database, nothing goes to
 * the customers' URLs, and what asks for a send now (a ping, a retry) is refused rather than queued for nobody.
 */
export class WebhookDeliverySwitch {
  constructor(readonly on = true) {}
}

export class WebhookSettings {
  /** After 5 s, 30 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (about a day), a delivery is failed. */
  /** An endpoint whose deliveries all failed for this long (5 days) is disabled. */
  static readonly DEFAULT_DISABLE_AFTER_MS = 5 * 24 * 3600 * 1000;

  static readonly DEFAULT_RETRY_DELAYS_MS = [5, 30, 300, 1800, 7200, 18_000, 36_000, 36_000].map((s) => s * 1000);

  /**
   * How long an attempt waits when its event is not settled in the feed yet (a writing transaction older than its own
   * is still in flight; usually none is): the delivery carries the event's feed position, which must be final. Short:
   * the older transaction is usually a moment from its commit, and every wait adds to the delivery's lag.
   */
  static readonly SETTLE_WAIT_MS = 200;

  constructor(
    /** The waits between attempts: attempt n + 1 comes retryDelaysMs[n − 1] after attempt n fails. */
    readonly retryDelaysMs: readonly number[] = WebhookSettings.DEFAULT_RETRY_DELAYS_MS,
    /** A receiver that has not answered by then failed the attempt. */
    readonly timeoutMs = 10_000,
    /** Each wait is stretched by up to this fraction, at random, so that retries do not come in waves. */
    readonly jitter = 0.1,
    /** An endpoint whose deliveries all failed for this long is disabled. */
    readonly disableAfterMs = WebhookSettings.DEFAULT_DISABLE_AFTER_MS,
    readonly random: () => number = Math.random,
  ) {}

  /** When attempt `attempt + 1` should run after attempt `attempt` failed at `at`; null when none is left. */
  nextAttemptAt(attempt: number, at: Date): Date | null {
    const delay = this.retryDelaysMs[attempt - 1];
    if (delay === undefined) return null;
    return new Date(at.getTime() + Math.round(delay * (1 + this.jitter * this.random())));
  }
}
