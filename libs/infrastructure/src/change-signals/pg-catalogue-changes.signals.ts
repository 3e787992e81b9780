import { AsyncResource } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import type { Client } from 'pg';
import { CATALOGUE_CHANGES_CHANNEL } from '../database/migrations/1796001000000-catalogue-change-signals';
import { TransactionHost } from '../database/transaction-host';

export { CATALOGUE_CHANGES_CHANNEL };

/** What the catalogue cache is told by the listener. */
export interface CatalogueChangeSubscriber {
  /** These tables changed (a trigger's notice, or a stock change announced after its commit). */
  changed(tables: readonly string[]): void;
  /** The listener lost its connection or got a new one: changes may have been missed meanwhile. */
  reset(): void;
}

/** Stock changes are announced at most once per this (ms): a burst of orders is one notice. */
export const STOCK_ANNOUNCE_EVERY_MS = 5;
/** A heartbeat that has not come back after this is given up, and the next one sent. */
const HEARTBEAT_GIVE_UP_MS = 1000;
const NOTIFY = 'SELECT pg_notify($1, $2)';

/**
 * Catalogue changes over the key revocations' LISTEN connection (PgKeyRevocations: one connection per instance).
 *
 * - Received: the triggers on `categories` and `pets` (migration CatalogueChangeSignals) and the stock announcements
 *   arrive on CATALOGUE_CHANGES_CHANNEL, their payload the tables changed, comma-separated.
 * - Announced: `announce(table)`, after a commit (CatalogueCommits), coalesced into one notice per
 *   STOCK_ANNOUNCE_EVERY_MS, sent through the pool outside the request that committed (a request answered meanwhile
 *   must not take the notice with it).
 * - How recent what it heard is (`heardWithin`): once `watch(everyMs)` is called, the listening connection NOTIFYs
 *   itself on a channel of its own every `everyMs`. PostgreSQL delivers notifications to a session in the order of its
 *   one queue, and a notifying transaction queues its notice before its commit, holding a lock that makes the next
 *   notifier wait for its end: so when a heartbeat comes back, every notice of a transaction that committed before it
 *   was sent has arrived. "Heard within 100 ms" thus means: no change committed more than 100 ms ago is unheard of,
 *   however busy the server or late the connection (a late heartbeat makes the cache untrusted, not stale).
 */
export class PgCatalogueChanges {
  private readonly subscribers: CatalogueChangeSubscriber[] = [];
  /** The channel this instance's heartbeats go to (nobody else LISTENs to it). */
  readonly heartbeatChannel = `petstore_catalogue_heartbeat_${randomBytes(12).toString('hex')}`;
  private client: Client | null = null;
  private heartbeatEveryMs = 0;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private inFlight: { seq: number; sentAt: number } | null = null;
  private seq = 0;
  /** When the last heartbeat that came back was sent (performance.now()); -Infinity: none since connecting. */
  private heardAt = -Infinity;
  private readonly pending = new Set<string>();
  private flushTimer: NodeJS.Timeout | null = null;
  private lastFlushAt = -Infinity;
  /** Schedules in the context of construction (start-up): a flush never runs inside the request that caused it. */
  private readonly schedule: (work: () => void, ms: number) => NodeJS.Timeout;
  /** Told when an announcement could not be sent (a log line): the other instances then rely on the maximum age. */
  onAnnounceFailed?: (error: unknown) => void;

  constructor(
    private readonly host: TransactionHost,
    private readonly listener: { readonly listening: boolean },
  ) {
    this.schedule = AsyncResource.bind((work: () => void, ms: number) => {
      const timer = setTimeout(work, ms);
      timer.unref();
      return timer;
    });
  }

  subscribe(subscriber: CatalogueChangeSubscriber): void {
    this.subscribers.push(subscriber);
  }

  /** Starts the heartbeat (the catalogue cache, when on): one NOTIFY to itself every `everyMs` while connected. */
  watch(everyMs: number): void {
    this.heartbeatEveryMs = Math.max(1, everyMs);
    if (this.client) this.startHeartbeat();
  }

  /**
   * Whether the listener receives, and every change committed more than `ms` ago has been heard of (the last
   * heartbeat back was sent less than `ms` ago).
   */
  heardWithin(ms: number): boolean {
    return this.listener.listening && performance.now() - this.heardAt <= ms;
  }

  /** The age of what was last heard (ms since the last heartbeat back was sent); Infinity: none. */
  get heardAgeMs(): number {
    return performance.now() - this.heardAt;
  }

  /** Announces a change of `table` to every instance (this one included), coalesced. */
  announce(table: string): void {
    this.pending.add(table);
    if (this.flushTimer) return;
    const wait = Math.max(0, this.lastFlushAt + STOCK_ANNOUNCE_EVERY_MS - performance.now());
    this.flushTimer = this.schedule(() => this.flush(), wait);
  }

  /** Sends what is pending now (the coalescing timer, and tests). */
  async flush(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    if (!this.pending.size) return;
    const payload = [...this.pending].join(',');
    this.pending.clear();
    this.lastFlushAt = performance.now();
    await this.host.query(NOTIFY, [CATALOGUE_CHANGES_CHANNEL, payload]).catch((error: unknown) => {
      this.onAnnounceFailed?.(error);
    });
  }

  /** PgKeyRevocations: its connection LISTENs (to both channels here) now, or is gone (null). */
  attach(client: Client | null): void {
    this.client = client;
    this.inFlight = null;
    this.heardAt = -Infinity;
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = null;
    if (client && this.heartbeatEveryMs) this.startHeartbeat();
  }

  /** PgKeyRevocations: a notification on CATALOGUE_CHANGES_CHANNEL or `heartbeatChannel`. */
  receive(channel: string, payload: string | undefined): void {
    if (channel === this.heartbeatChannel) {
      if (this.inFlight && payload === String(this.inFlight.seq)) {
        this.heardAt = this.inFlight.sentAt;
        this.inFlight = null;
      }
      return;
    }
    if (channel !== CATALOGUE_CHANGES_CHANNEL || !payload) return;
    const tables = payload.split(',');
    for (const subscriber of this.subscribers) subscriber.changed(tables);
  }

  /** PgKeyRevocations: the listener was lost or proved itself anew: what is cached may have missed changes. */
  reset(): void {
    for (const subscriber of this.subscribers) subscriber.reset();
  }

  /** Stops the timers (the listener closes). */
  close(): void {
    this.attach(null);
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
  }

  private startHeartbeat(): void {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = setInterval(() => this.beat(), this.heartbeatEveryMs);
    this.heartbeatTimer.unref();
    this.beat();
  }

  /** One heartbeat, unless one is on its way (for less than HEARTBEAT_GIVE_UP_MS). */
  private beat(): void {
    const client = this.client;
    if (!client) return;
    const now = performance.now();
    if (this.inFlight && now - this.inFlight.sentAt < HEARTBEAT_GIVE_UP_MS) return;
    const beat = { seq: ++this.seq, sentAt: now };
    this.inFlight = beat;
    // A failure here is the connection's, which PgKeyRevocations notices (its own heartbeat) and replaces.
    client.query(NOTIFY, [this.heartbeatChannel, String(beat.seq)]).catch(() => undefined);
  }
}
