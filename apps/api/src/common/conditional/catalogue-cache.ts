import { LRUCache } from 'lru-cache';
import type { VerifiedKey } from '@petstore/application';
import { type Account, scopesGrant } from '@petstore/domain';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MergeRouteConfig } from '../http-kit/route-config';

/** The tables a catalogue answer is made of: a change of one drops every answer that depends on it. */
export type CatalogueTable = 'categories' | 'pets' | 'stock';
const TABLES: readonly CatalogueTable[] = ['categories', 'pets', 'stock'];

/** The route config key of `@CachedRead`. */
export const CACHED_READ_ROUTE_CONFIG = 'petstoreCachedRead';

/**
 * A catalogue GET whose 200 answers every instance keeps in memory (CatalogueCache), for the same URL, for every
 * caller allowed to read: `@CachedRead('pets')`, naming the tables the answer is made of. Only for answers that are
 * the same for every account (`@Auth()` reads of the catalogue: categories, pets, stock), never an administrator's
 * route nor an account's own resources (orders, events, keys, messages: docs/operations.md, "Catalogue cache"), and
 * only on `@Conditional`/`@ConditionalPage` routes, whose tag the cache keeps with the bytes.
 */
export function CachedRead(...tables: CatalogueTable[]): MethodDecorator {
  return MergeRouteConfig({ [CACHED_READ_ROUTE_CONFIG]: tables });
}

export interface CatalogueCacheSettings {
  enabled: boolean;
  maxEntries: number;
  maxBytes: number;
  /** No entry is served once its query started longer ago than this (the backstop for a lost signal). */
  maxAgeMs: number;
  /** Entries are served only while every change committed longer ago than this has been heard of. */
  stalenessBoundMs: number;
}

/** How fresh the change signals are: PgCatalogueChanges. */
export interface ChangeFreshness {
  heardWithin(ms: number): boolean;
}

/**
 * The accounts that wrote lately (any write answered 2xx): their reads bypass the cache on every instance for the
 * maximum age, so that they read their own writes at once wherever they land. In this process's memory, and in Redis
 * when REDIS_URL is set (then on every instance), as the replicas' write positions.
 */
export interface RecentWriters {
  mark(account: number): Promise<void>;
  /** Whether the account wrote within the maximum age; rejects when the shared store does not answer. */
  wrote(account: number): boolean | Promise<boolean>;
}

/** One cached answer: its bytes, its headers, and what it was built from. */
export interface CachedAnswer {
  readonly body: Buffer;
  readonly tag: string;
  readonly contentType: string;
  readonly link?: string;
  readonly tables: readonly CatalogueTable[];
  /** The tables' generations when its query started. */
  readonly generations: readonly number[];
  /** When its query started (performance.now()): its age counts from there. */
  readonly startedAt: number;
}

/** A miss being answered: later misses of the same key wait for it (single flight). */
interface Flight {
  readonly key: string;
  readonly tables: readonly CatalogueTable[];
  readonly generations: readonly number[];
  readonly startedAt: number;
  readonly done: Promise<CachedAnswer | undefined>;
  resolve(answer: CachedAnswer | undefined): void;
  settled: boolean;
}

export type BypassReason = 'off' | 'untrusted' | 'writer' | 'writers_unknown';

/** What the metrics read (counters since start). */
export class CatalogueCacheStats {
  hits = 0;
  misses = 0;
  /** Requests that joined another's miss and were answered by it. */
  joined = 0;
  readonly bypasses: Record<BypassReason, number> = { off: 0, untrusted: 0, writer: 0, writers_unknown: 0 };
  /** Change notices received (per table), resets included as one for every table. */
  readonly invalidations: Record<CatalogueTable, number> = { categories: 0, pets: 0, stock: 0 };
  /** Entries dropped to stay within the bounds. */
  evictions = 0;
  /** Entries not kept because a change was heard while their query ran. */
  discarded = 0;
}

/** A follower waits at most this for the miss it joined (a leader that never answers must not hold it). */
const JOIN_TIMEOUT_MS = 1000;
/** Bytes an entry costs beyond its body and headers: the object, the key, the LRU's bookkeeping (an estimate). */
const ENTRY_OVERHEAD_BYTES = 300;

/**
 * The catalogue read cache of one instance (issue 52): a catalogue GET's 200 answer as sent (its bytes, `ETag`,
 * `Content-Type` and `Link`), by URL, so that a hit costs neither the query, nor the serialisation, nor the hash.
 *
 * - Invalidation: per table, a generation, raised by every change notice (the triggers on `categories` and `pets`,
 *   the stock announcements; this instance's own stock commits at once: CatalogueCommits). An entry is served only
 *   while its tables' generations are those its query started with.
 * - Staleness bound: entries are served only while the listener has heard every change committed more than
 *   `stalenessBoundMs` ago (ChangeFreshness: its heartbeat); else the request is a bypass, answered from the database.
 *   A listener that reconnects (`reset`) empties the cache: notices may have been missed.
 * - Maximum age: no entry older than `maxAgeMs` (from its query's start) is served, whatever was heard: a lost notice
 *   (the previous release's stock changes, an announcement that failed) cannot last longer.
 * - Read-your-writes: an account that wrote within `maxAgeMs` is a bypass (RecentWriters): every entry that may
 *   predate its write is older than that.
 * - Single flight: a miss while another request is answering the same key waits for its answer.
 * - Bounded: `maxEntries` and `maxBytes` (lru-cache: least recently used first).
 */
export class CatalogueCache {
  readonly stats = new CatalogueCacheStats();
  private readonly generations: Record<CatalogueTable, number> = { categories: 0, pets: 0, stock: 0 };
  private readonly entries: LRUCache<string, CachedAnswer>;
  private readonly flights = new Map<string, Flight>();

  constructor(
    readonly settings: CatalogueCacheSettings,
    private readonly freshness: ChangeFreshness,
    private readonly writers: RecentWriters,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.entries = new LRUCache<string, CachedAnswer>({
      max: Math.max(1, settings.maxEntries),
      maxSize: Math.max(1, settings.maxBytes),
      sizeCalculation: (answer, key) =>
        answer.body.length + key.length + answer.tag.length + (answer.link?.length ?? 0) + ENTRY_OVERHEAD_BYTES,
      dispose: (_answer, _key, reason) => {
        if (reason === 'evict') this.stats.evictions++;
      },
    });
  }

  get enabled(): boolean {
    return this.settings.enabled;
  }

  /** Entries held, and their bytes (as sized for the bound). */
  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.entries.calculatedSize };
  }

  /** Change notices: the tables changed. */
  changed(tables: readonly string[]): void {
    for (const table of tables) {
      if (!(TABLES as readonly string[]).includes(table)) continue;
      this.generations[table as CatalogueTable]++;
      this.stats.invalidations[table as CatalogueTable]++;
    }
  }

  /** The listener was lost or is back: nothing cached can be trusted. */
  reset(): void {
    this.changed(TABLES);
    this.entries.clear();
  }

  /** Whether entries may be served now: on, and every change committed before the bound heard of. */
  get trusted(): boolean {
    return this.settings.enabled && this.freshness.heardWithin(this.settings.stalenessBoundMs);
  }

  /**
   * Why `account`'s read may not be served from the cache, or undefined: it may. Asks the shared store of writers
   * (Redis) when there is one: a store that does not answer is a bypass.
   */
  async bypassFor(account: number): Promise<BypassReason | undefined> {
    if (!this.settings.enabled) return 'off';
    if (!this.trusted) return 'untrusted';
    try {
      if (await this.writers.wrote(account)) return 'writer';
    } catch {
      return 'writers_unknown';
    }
    return undefined;
  }

  /** The answer cached for `key`, if it may be served now (trust and writers are the caller's: `bypassFor`). */
  lookup(key: string): CachedAnswer | undefined {
    const answer = this.entries.get(key);
    if (!answer) return undefined;
    if (this.current(answer)) return answer;
    this.entries.delete(key);
    return undefined;
  }

  /** A miss: the flight to wait for (another request is answering the key), or a new one, this request's. */
  flightFor(key: string, tables: readonly CatalogueTable[]): { flight: Flight; leader: boolean } {
    const generations = tables.map((table) => this.generations[table]);
    const existing = this.flights.get(key);
    if (existing && !existing.settled && sameGenerations(existing.generations, generations)) {
      return { flight: existing, leader: false };
    }
    let resolve!: (answer: CachedAnswer | undefined) => void;
    const done = new Promise<CachedAnswer | undefined>((settle) => (resolve = settle));
    const flight: Flight = {
      key,
      tables,
      generations,
      startedAt: this.now(),
      done,
      settled: false,
      resolve: (answer) => {
        if (flight.settled) return;
        flight.settled = true;
        if (this.flights.get(key) === flight) this.flights.delete(key);
        resolve(answer);
      },
    };
    this.flights.set(key, flight);
    return { flight, leader: true };
  }

  /** Waits for a flight's answer (at most JOIN_TIMEOUT_MS): one that may still be served, or undefined. */
  async join(flight: Flight): Promise<CachedAnswer | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), JOIN_TIMEOUT_MS)));
    const answer = await Promise.race([flight.done, late]);
    clearTimeout(timer);
    if (!answer || !this.trusted || !this.current(answer)) return undefined;
    this.stats.joined++;
    return answer;
  }

  /**
   * The leader's answer, sent: kept (and handed to the requests waiting for it) if no change of its tables was heard
   * since its query started and the cache is trusted; else dropped, and the waiting requests ask the database.
   */
  settle(flight: Flight, sent?: { body: string | Buffer; tag: string; contentType: string; link?: string }): void {
    if (!sent) return flight.resolve(undefined);
    const answer: CachedAnswer = {
      body: typeof sent.body === 'string' ? Buffer.from(sent.body) : sent.body,
      tag: sent.tag,
      contentType: sent.contentType,
      link: sent.link,
      tables: flight.tables,
      generations: flight.generations,
      startedAt: flight.startedAt,
    };
    if (!this.trusted || !this.current(answer)) {
      this.stats.discarded++;
      return flight.resolve(undefined);
    }
    this.entries.set(flight.key, answer);
    flight.resolve(answer);
  }

  /** After a write answered 2xx by `account`: its reads bypass the cache, everywhere, for the maximum age. */
  wrote(account: number): Promise<void> {
    return this.writers.mark(account);
  }

  private current(answer: CachedAnswer): boolean {
    if (this.now() - answer.startedAt > this.settings.maxAgeMs) return false;
    for (let i = 0; i < answer.tables.length; i++) {
      if (this.generations[answer.tables[i]] !== answer.generations[i]) return false;
    }
    return true;
  }
}

function sameGenerations(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}

/** RecentWriters in this process's memory (bounded: the oldest marks go first), optionally shared (`shared`). */
export class LocalRecentWriters implements RecentWriters {
  private readonly marks: LRUCache<number, true>;

  constructor(
    ttlMs: number,
    private readonly shared?: { mark(account: number): Promise<void>; wrote(account: number): Promise<boolean> },
    maxAccounts = 100_000,
  ) {
    this.marks = new LRUCache<number, true>({ max: maxAccounts, ttl: Math.max(1, ttlMs), ttlAutopurge: false });
  }

  async mark(account: number): Promise<void> {
    this.marks.set(account, true);
    await this.shared?.mark(account);
  }

  wrote(account: number): boolean | Promise<boolean> {
    if (this.marks.has(account)) return true;
    return this.shared ? this.shared.wrote(account) : false;
  }
}

/** What a request carries through the hooks. */
interface CacheState {
  flight?: Flight;
  /** Served from the cache: the tag the conditional hook sends (no hash). */
  served?: CachedAnswer;
}
const STATE = Symbol('catalogueCache');
type Carrying = FastifyRequest & { [STATE]?: CacheState; user?: Account; apiKey?: VerifiedKey };

/** Who sends a request, as the bearer strategy verified it (once per request; the guard reuses it). */
export type CacheAuthenticator = (
  request: FastifyRequest,
) => Promise<{ account: Account; key: VerifiedKey } | { account: null }>;

function tablesOf(request: FastifyRequest): readonly CatalogueTable[] | undefined {
  const config = request.routeOptions.config as { [CACHED_READ_ROUTE_CONFIG]?: CatalogueTable[] } | undefined;
  return config?.[CACHED_READ_ROUTE_CONFIG];
}

/**
 * The conditional hook's side of the cache (conditional.hooks.ts): the tag of an answer served from the cache (no
 * hash), and every tagged 200 of a leader's miss, kept.
 */
export interface TaggedAnswers {
  cachedTag(request: FastifyRequest): string | undefined;
  tagged(request: FastifyRequest, reply: FastifyReply, payload: string, tag: string): void;
}

/**
 * The cache's hooks on the Fastify instance:
 * - preHandler, on a `@CachedRead` GET: after every onRequest hook (drain, rate limit, the deprecation's 410), the
 *   caller is authenticated as the guard would (a request without a valid key, or whose key may not read, goes on to
 *   the guard, which refuses it: nothing is served before the key check); then a hit is sent from here, Nest not
 *   entered; a miss joins another's (single flight) or becomes the key's leader and goes on to the handler.
 * - onSend (through the conditional hook, `TaggedAnswers`): the leader's 200, with its tag, is kept.
 * - onResponse: a leader answered otherwise (an error, a timeout) lets its followers go.
 * - onSend, on any write answered 2xx by an account: it is a recent writer (before the answer leaves).
 */
export function registerCatalogueCache(
  fastify: FastifyInstance,
  cache: CatalogueCache,
  authenticate: CacheAuthenticator,
  options: { canStore?: () => boolean } = {},
): TaggedAnswers {
  const serve = (request: Carrying, reply: FastifyReply, answer: CachedAnswer) => {
    (request[STATE] ??= {}).served = answer;
    void reply.header('content-type', answer.contentType);
    if (answer.link !== undefined) void reply.header('link', answer.link);
    return reply.send(answer.body);
  };
  fastify.addHook('preHandler', async (request: Carrying, reply) => {
    if (!cache.enabled || request.method !== 'GET') return;
    const tables = tablesOf(request);
    if (!tables) return;
    const outcome = await authenticate(request).catch(() => ({ account: null }) as const);
    // The guard refuses it (401, 403), or answers for the failure: the cache never answers before the key check.
    if (!outcome.account || !scopesGrant(outcome.key.scopes, 'read')) return;
    const bypass = await cache.bypassFor(outcome.account.id);
    if (bypass) {
      cache.stats.bypasses[bypass]++;
      return;
    }
    const key = request.url;
    const hit = cache.lookup(key);
    if (hit) {
      cache.stats.hits++;
      request.user = outcome.account;
      request.apiKey = outcome.key;
      return serve(request, reply, hit);
    }
    cache.stats.misses++;
    const { flight, leader } = cache.flightFor(key, tables);
    if (leader) {
      (request[STATE] ??= {}).flight = flight;
      return;
    }
    const answer = await cache.join(flight);
    if (!answer) return;
    request.user = outcome.account;
    request.apiKey = outcome.key;
    return serve(request, reply, answer);
  });
  fastify.addHook('onResponse', (request: Carrying, _reply, done) => {
    request[STATE]?.flight?.resolve(undefined);
    done();
  });
  fastify.addHook('onSend', (request: Carrying, reply, payload, done) => {
    const account = request.user;
    const write = !(request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS');
    if (!cache.enabled || !write || !account || reply.statusCode < 200 || reply.statusCode >= 300) {
      return done(null, payload);
    }
    // A store that does not answer: its reads on other instances may miss the write until the bound (logged there).
    cache.wrote(account.id).then(
      () => done(null, payload),
      () => done(null, payload),
    );
  });
  return {
    cachedTag: (request: Carrying) => request[STATE]?.served?.tag,
    tagged: (request: Carrying, reply, payload, tag) => {
      const flight = request[STATE]?.flight;
      if (!flight) return;
      if (options.canStore && !options.canStore()) return cache.settle(flight);
      const link = reply.getHeader('link');
      cache.settle(flight, {
        body: payload,
        tag,
        contentType: String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8'),
        link: link === undefined ? undefined : Array.isArray(link) ? link.join(', ') : String(link),
      });
    },
  };
}
