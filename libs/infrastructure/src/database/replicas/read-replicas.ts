import { AsyncLocalStorage } from 'node:async_hooks';
import { ConcurrentUpdateError, StoreUnavailableError } from '@petstore/application';
import type { Pool } from 'pg';
import { DEFAULT_POOL_LIMITS, PoolLimits } from '../data-source';
import { DatabasePool } from '../database-pool';
import { isStatementCostTimeout } from '../driver-errors';
import { formatLsn, parseLsn, PositionSample, PrimaryPositions, servesReads } from './replica-lag';

/**
 * Where each account's last write reached on the primary (its WAL position after the commit), shared by every instance
 * (Redis, when REDIS_URL is set), so that a read on another instance waits for a replica that has replayed it.
 */
export interface SharedWritePositions {
  /** The account's last write position known, or undefined; rejects when the store does not answer. */
  get(account: number): Promise<bigint | undefined>;
  /** Raises the account's position to `lsn` (never lowers it). */
  raise(account: number, lsn: bigint): Promise<void>;
  close(): Promise<void>;
}

export interface ReadReplicaOptions {
  urls: string[];
  /**
   * The primary's URL: its position is then polled on a connection of its own, so that a busy pool (requests waiting
   * for a connection) cannot delay the polls and make every replica look late. Without it, on the pool.
   */
  primaryUrl?: string;
  /** A replica further behind than this serves no read (DATABASE_REPLICA_MAX_LAG_MS). */
  maxLagMs: number;
  /** How often each server's position is polled. */
  pollMs?: number;
  /** How long a poll may take before the replica counts as not answering. */
  pollTimeoutMs?: number;
  limits?: PoolLimits;
  /** Across instances; without it, this process's own memory only. */
  shared?: SharedWritePositions;
  logger?: { log(message: string): void; warn(message: string): void };
}

/** One replica: its pool and what its last poll said. */
export class Replica {
  /** Its host, port and database, for logs and metric labels (never the password). */
  readonly label: string;
  /** The requests' statements. */
  readonly pool: DatabasePool;
  /**
   * The polls' own connection: requests that fill `pool` with slow statements (one client's, say) cannot delay a poll
   * and have the replica taken out for everyone.
   */
  readonly pollPool: DatabasePool;
  /** Whether reads may go to it. */
  inUse = false;
  answers = false;
  replayed?: PositionSample;
  stalenessMs = Infinity;
  polling = false;
  /** Why it is out, for the log line. */
  reason = 'not polled yet';
  /** What the log last said of it (one line per change). */
  reported: 'nothing' | 'in' | 'out' = 'nothing';

  constructor(url: string, limits: PoolLimits) {
    const parsed = new URL(url);
    this.label = `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`;
    this.pool = new DatabasePool(url, limits);
    this.pollPool = new DatabasePool(url, { ...limits, max: 1 });
  }
}

/**
 * The statements of one client (an account, or every request without one) that may time out on a replica in a minute
 * and still be run again on the primary (`ReadReplicas.timedOut`).
 */
export const REPLICA_TIMEOUTS_PER_MINUTE = 3;

/** The primary, as a target of reads (the routing's other answer). */
export const PRIMARY = 'primary';
type Target = Replica | typeof PRIMARY;

/** What this process knows of an account: its last write, and how recent the data it read was (monotonic reads). */
interface AccountReads {
  written: bigint;
  /** Its reads saw nothing newer than... at least this position; a replica must have replayed it to serve it. */
  floor: bigint;
  /** The last read, whose position is known once its target is polled after it (then folded into `floor`). */
  last?: { target: Target; at: number };
}

/** The routing of one request: made by `scopeFor` once the caller is known, consumed by TransactionHost. */
export class ReadScope {
  /** Chosen at the first statement: every statement of the request reads from the same server. */
  target?: Target;

  constructor(
    readonly account: number | null,
    /** The account's last write position (this process's and the shared store's). */
    readonly written: bigint,
  ) {}

  /** A scope whose reads go to the primary. */
  static onPrimary(account: number | null): ReadScope {
    const scope = new ReadScope(account, 0n);
    scope.target = PRIMARY;
    return scope;
  }
}

const MAX_ACCOUNTS = 100_000;

/**
 * Reads on hot standbys (DATABASE_REPLICA_URLS). A request whose route may read from a replica runs inside a
 * `ReadScope` (`run`); TransactionHost sends its statements outside a transaction to the replica `pick` chooses, and
 * everything else (transactions, writes, locking reads, every statement outside a scope) to the primary.
 *
 * - Bounded staleness: every `pollMs` the primary's WAL position and each replica's replay position are polled, in the
 *   background; a replica more than `maxLagMs` behind (PrimaryPositions) or not answering is out until it is back.
 * - Read-your-writes: after an account's write, `recordWrite` takes the primary's position (after the commit) and
 *   keeps it, here and in `shared`; a replica serves the account only once its polled replay position has passed it.
 * - Monotonic reads per account (in this process): after a read from a server, the account is held to it until that
 *   server's next poll shows a position at least as new as what the read can have seen, and every server it reads from
 *   afterwards must have replayed that far.
 * - A replica whose statement fails for want of an answer (connection refused or lost) is out at once, and the
 *   statement is run again on the primary (the caller sees no error). A statement that times out (its own slowness,
 *   or a pool full of slow statements) leaves the replica in: see `timedOut`. Polls use a connection of their own.
 */
export class ReadReplicas {
  readonly replicas: Replica[];
  /** Told of every statement served outside a transaction, with its target's label (the metrics count them). */
  onRead?: (target: string) => void;
  /**
   * Told of every statement that timed out on a replica (its statement timeout, or no connection of its pool free in
   * time), with the replica's label and whether it was run again on the primary (the metrics count them).
   */
  onTimeout?: (target: string, rerun: boolean) => void;
  /** Per account (null: requests without one), the replica timeouts of the current window: see `timedOut`. */
  private readonly timeouts = new Map<number | null, { since: number; count: number }>();
  private readonly scopes = new AsyncLocalStorage<ReadScope>();
  private readonly primaryPositions: PrimaryPositions;
  /** Where the primary's position is polled: a pool of one connection of its own (`primaryUrl`), else the pool. */
  private readonly primaryPoll: Pool;
  private readonly accounts = new Map<number, AccountReads>();
  private readonly pollMs: number;
  private readonly pollTimeoutMs: number;
  private readonly maxLagMs: number;
  private timer?: NodeJS.Timeout;
  private primaryPolling = false;
  private next = 0;
  private sharedDown = false;
  private closed = false;

  constructor(
    private readonly primary: Pool,
    private readonly options: ReadReplicaOptions,
  ) {
    this.maxLagMs = options.maxLagMs;
    this.pollMs = options.pollMs ?? 200;
    this.pollTimeoutMs = options.pollTimeoutMs ?? Math.min(1000, options.maxLagMs);
    this.primaryPositions = new PrimaryPositions(Math.max(5000, 4 * options.maxLagMs));
    this.replicas = options.urls.map((url) => new Replica(url, options.limits ?? DEFAULT_POOL_LIMITS));
    this.primaryPoll = options.primaryUrl
      ? new DatabasePool(options.primaryUrl, { ...(options.limits ?? DEFAULT_POOL_LIMITS), max: 1 })
      : primary;
  }

  /** Starts polling (the first round at once: the primary first, so that the replicas are measured against it). */
  start(): void {
    if (this.timer) return;
    void this.pollPrimary().then(() => Promise.all(this.replicas.map((replica) => this.pollReplica(replica))));
    this.timer = setInterval(() => void this.poll(), this.pollMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await Promise.all([
      ...this.replicas.flatMap((replica) => [replica.pool.close(), replica.pollPool.close()]),
      this.primaryPoll instanceof DatabasePool && this.primaryPoll !== this.primary ? this.primaryPoll.close() : null,
      this.options.shared?.close().catch(() => undefined),
    ]);
  }

  /** One poll of every server whose previous poll has answered; resolves when they have. */
  async poll(): Promise<void> {
    await Promise.all([this.pollPrimary(), ...this.replicas.map((replica) => this.pollReplica(replica))]);
  }

  /**
   * The routing of a request by `account` (null: nobody). Asks the shared store for the account's last write, unless
   * no replica serves now (then the primary it is, and its reads are counted as the primary's); when the store does
   * not answer, the primary too.
   */
  async scopeFor(account: number | null): Promise<ReadScope> {
    if (!this.replicas.some((replica) => replica.inUse)) return ReadScope.onPrimary(account);
    if (account === null) return new ReadScope(null, 0n);
    let written = this.accounts.get(account)?.written ?? 0n;
    if (this.options.shared) {
      try {
        const shared = await this.options.shared.get(account);
        if (shared !== undefined && shared > written) written = shared;
        this.sharedUp();
      } catch (error) {
        this.sharedFailed(error);
        return ReadScope.onPrimary(account);
      }
    }
    return new ReadScope(account, written);
  }

  /** Runs `work` with `scope` as the routing of its statements. */
  run<T>(scope: ReadScope, work: () => T): T {
    return this.scopes.run(scope, work);
  }

  /** The routing of the request in progress, if it may read from a replica. */
  current(): ReadScope | undefined {
    return this.scopes.getStore();
  }

  /** The replica the scope's next statement reads from, or undefined: the primary. Chosen once per request. */
  pick(scope: ReadScope): Replica | undefined {
    if (scope.target === undefined) scope.target = this.choose(scope);
    return scope.target === PRIMARY ? undefined : scope.target.inUse ? scope.target : undefined;
  }

  /** A statement of the scope was answered by `replica` (undefined: the primary). */
  served(scope: ReadScope, replica: Replica | undefined): void {
    const target = replica ?? PRIMARY;
    if (replica === undefined) scope.target = PRIMARY;
    this.onRead?.(replica ? replica.label : PRIMARY);
    if (scope.account === null) return;
    const reads = this.readsOf(scope.account);
    this.settle(reads);
    reads.last = { target, at: performance.now() };
  }

  /**
   * A statement on `replica` failed with `error` (translated): whether to run it again on the primary. A replica that
   * cannot be reached or does not answer is out at once (until a poll finds it back); a write sent to it (read-only,
   * 25006) or a query cancelled by replay (a recovery conflict) is only run on the primary. A statement that timed out
   * there (see `timedOut`) says nothing of the replica's health: it stays in.
   */
  failed(scope: ReadScope, replica: Replica, error: unknown): boolean {
    scope.target = PRIMARY;
    if (error instanceof ConcurrentUpdateError) return true;
    if (!(error instanceof StoreUnavailableError)) return false;
    if (isStatementCostTimeout(error)) return this.timedOut(scope, replica);
    const cause = error.cause as { code?: string; driverError?: { code?: string } } | undefined;
    if ((cause?.driverError?.code ?? cause?.code) !== '25006') this.out(replica, `a read failed: ${error.message}`);
    return true;
  }

  /**
   * A statement of `scope` timed out on `replica`: cancelled by the replica's statement timeout, or no connection of
   * the replica's pool came free in time. That is the statement's (or its client's) cost, not the replica's health,
   * which its polls judge on their own connection: the replica stays in for everyone. The statement is run again on
   * the primary at most once per request (the scope reads from the primary from now on), and only while the client
   * (its account, or every request without one together) has timed out fewer than REPLICA_TIMEOUTS_PER_MINUTE times
   * this minute: beyond that its slow reads are answered as timed out (503) without costing the primary as much
   * again. Whether to run it again.
   */
  private timedOut(scope: ReadScope, replica: Replica): boolean {
    const now = performance.now();
    let window = this.timeouts.get(scope.account);
    if (!window || now - window.since >= 60_000) {
      if (!window && this.timeouts.size >= MAX_ACCOUNTS) this.timeouts.clear();
      window = { since: now, count: 0 };
      this.timeouts.set(scope.account, window);
    }
    window.count++;
    const rerun = window.count <= REPLICA_TIMEOUTS_PER_MINUTE;
    this.onTimeout?.(replica.label, rerun);
    return rerun;
  }

  /**
   * After a write by `account` answered 2xx: the primary's WAL position now (after the commit) becomes the account's,
   * here and in the shared store, before the answer leaves (so that its next read, anywhere, waits for it).
   */
  async recordWrite(account: number): Promise<void> {
    const { rows } = await this.primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
    const lsn = parseLsn(rows[0].lsn);
    const reads = this.readsOf(account);
    if (lsn > reads.written) reads.written = lsn;
    if (lsn > reads.floor) reads.floor = lsn;
    if (!this.options.shared) return;
    try {
      await this.options.shared.raise(account, lsn);
      this.sharedUp();
    } catch (error) {
      this.sharedFailed(error);
    }
  }

  private choose(scope: ReadScope): Target {
    let need = scope.written;
    let pinned: Target | undefined;
    if (scope.account !== null) {
      const reads = this.accounts.get(scope.account);
      if (reads) {
        this.settle(reads);
        if (reads.floor > need) need = reads.floor;
        pinned = reads.last?.target;
      }
    }
    if (pinned === PRIMARY) return PRIMARY;
    const fits = (replica: Replica) => replica.inUse && replica.replayed !== undefined && replica.replayed.lsn >= need;
    if (pinned) return fits(pinned) ? pinned : PRIMARY;
    const candidates = this.replicas.filter(fits);
    if (!candidates.length) return PRIMARY;
    return candidates[this.next++ % candidates.length];
  }

  /** Folds the last read's position into the floor once its server was polled after it. */
  private settle(reads: AccountReads): void {
    const last = reads.last;
    if (!last) return;
    const sample = last.target === PRIMARY ? this.primaryPositions.latest() : last.target.replayed;
    if (!sample || sample.at <= last.at) return;
    if (sample.lsn > reads.floor) reads.floor = sample.lsn;
    reads.last = undefined;
  }

  private readsOf(account: number): AccountReads {
    let reads = this.accounts.get(account);
    if (!reads) {
      if (this.accounts.size >= MAX_ACCOUNTS) this.accounts.delete(this.accounts.keys().next().value as number);
      reads = { written: 0n, floor: 0n };
      this.accounts.set(account, reads);
    }
    return reads;
  }

  /** Polls the primary's WAL position (part of `poll`). */
  async pollPrimary(): Promise<void> {
    if (this.primaryPolling) return;
    this.primaryPolling = true;
    const at = performance.now();
    try {
      const { rows } = await this.primaryPoll.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
      this.primaryPositions.add({ at, lsn: parseLsn(rows[0].lsn) });
    } catch {
      // The primary's own failures show in every request; without new positions, the replicas' staleness grows.
    } finally {
      this.primaryPolling = false;
    }
  }

  private async pollReplica(replica: Replica): Promise<void> {
    if (replica.polling) return;
    replica.polling = true;
    const at = performance.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      const answer = replica.pollPool.query<{ standby: boolean; lsn: string | null }>(
        'SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS lsn',
      );
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${this.pollTimeoutMs} ms`)), this.pollTimeoutMs);
      });
      // A poll that is late marks the replica out now; it is not polled again until that query ends.
      answer.catch(() => undefined).finally(() => (replica.polling = false));
      const { rows } = await Promise.race([answer, late]);
      const row = rows[0];
      if (!row.standby || row.lsn === null) {
        replica.answers = false;
        return this.out(replica, 'it is not a standby (pg_is_in_recovery() is false)');
      }
      replica.answers = true;
      const lsn = parseLsn(row.lsn);
      if (!replica.replayed || lsn >= replica.replayed.lsn) replica.replayed = { at, lsn };
      replica.stalenessMs = this.primaryPositions.stalenessOf(replica.replayed.lsn, performance.now());
      if (servesReads(replica, this.maxLagMs)) return this.in(replica);
      const behind = Number.isFinite(replica.stalenessMs) ? `${Math.round(replica.stalenessMs)} ms` : 'too far';
      this.out(replica, `it is ${behind} behind the primary (DATABASE_REPLICA_MAX_LAG_MS ${this.maxLagMs})`);
    } catch (error) {
      replica.answers = false;
      this.out(replica, `it does not answer: ${(error as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
  }

  private in(replica: Replica): void {
    if (replica.inUse) return;
    replica.inUse = true;
    replica.reported = 'in';
    this.options.logger?.log(
      `Replica ${replica.label} in: reads may use it (${Math.round(replica.stalenessMs)} ms behind, replayed ` +
        `${formatLsn(replica.replayed?.lsn ?? 0n)})`,
    );
  }

  private out(replica: Replica, reason: string): void {
    replica.reason = reason;
    replica.inUse = false;
    // A poll that ends after `close` (its pool closed under it) says nothing.
    if (replica.reported === 'out' || this.closed) return;
    replica.reported = 'out';
    this.options.logger?.warn(`Replica ${replica.label} out: ${reason}; its reads go to the primary`);
  }

  private sharedFailed(error: unknown): void {
    if (this.sharedDown) return;
    this.sharedDown = true;
    this.options.logger?.warn(
      `The shared write positions (Redis) do not answer: reads by accounts go to the primary meanwhile (${
        (error as Error).message
      })`,
    );
  }

  private sharedUp(): void {
    if (!this.sharedDown) return;
    this.sharedDown = false;
    this.options.logger?.log('The shared write positions (Redis) answer again');
  }
}
