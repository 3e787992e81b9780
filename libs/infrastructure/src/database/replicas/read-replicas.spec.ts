import { ConcurrentUpdateError, StoreUnavailableError } from '@petstore/application';
import { resetDatabase, testDatabaseUrl } from '@petstore/testing';
import type { Pool } from 'pg';
import { DEFAULT_POOL_LIMITS } from '../data-source';
import { DatabasePool } from '../database-pool';
import { ReadReplicas, ReadScope, Replica, SharedWritePositions } from './read-replicas';
import { formatLsn } from './replica-lag';

/**
 * The routing on made-up positions: a primary that answers `pg_current_wal_lsn()` with what the test sets, replicas
 * whose polled state the test sets (their pools are never used here). The polls themselves run against real
 * PostgreSQL below, and on real replication in apps/api/test/read-replicas.e2e.spec.ts.
 */
class FakePrimary {
  lsn = 0n;
  query = async () => ({ rows: [{ lsn: formatLsn(this.lsn) }] });
}

class MemoryPositions implements SharedWritePositions {
  readonly positions = new Map<number, bigint>();
  down = false;
  async get(account: number) {
    if (this.down) throw new Error('connection refused');
    return this.positions.get(account);
  }
  async raise(account: number, lsn: bigint) {
    if (this.down) throw new Error('connection refused');
    if (lsn > (this.positions.get(account) ?? 0n)) this.positions.set(account, lsn);
  }
  async close() {
    this.positions.clear();
  }
}

function replicasOf(count: number, shared?: SharedWritePositions) {
  const primary = new FakePrimary();
  const lines: string[] = [];
  const replicas = new ReadReplicas(primary as unknown as Pool, {
    urls: Array.from({ length: count }, (_, i) => `postgres://u@replica-${i}:5432/db`),
    maxLagMs: 1000,
    ...(shared ? { shared } : {}),
    logger: { log: (line) => lines.push(`log ${line}`), warn: (line) => lines.push(`warn ${line}`) },
  });
  return { primary, replicas, lines };
}

/** The replica as a poll at `at` (performance.now()) would leave it. */
function polled(replica: Replica, lsn: bigint, at = performance.now()) {
  Object.assign(replica, { inUse: true, answers: true, stalenessMs: 0, replayed: { at, lsn } });
}

/** Where one statement of a new request by `account` goes: a replica's label, or `primary`. */
async function route(replicas: ReadReplicas, account: number | null): Promise<string> {
  const scope = await replicas.scopeFor(account);
  const replica = replicas.pick(scope);
  replicas.served(scope, replica);
  return replica?.label ?? 'primary';
}

describe('ReadReplicas: routing (positions made up)', () => {
  afterEach(() => jest.useRealTimers());

  it('sends reads to a replica in use, and to the primary when none is', async () => {
    const { replicas } = replicasOf(1);
    expect(await route(replicas, null)).toBe('primary');
    polled(replicas.replicas[0], 10n);
    expect(await route(replicas, null)).toBe('replica-0:5432/db');
    expect(await route(replicas, 7)).toBe('replica-0:5432/db');
    replicas.replicas[0].inUse = false;
    expect(await route(replicas, 7)).toBe('primary');
    await replicas.close();
  });

  it("reads an account's own writes: a replica only once it has replayed the write's position", async () => {
    const { primary, replicas } = replicasOf(1);
    polled(replicas.replicas[0], 100n);
    primary.lsn = 150n;
    await replicas.recordWrite(7);
    expect(await route(replicas, 7)).toBe('primary');
    // Another account, which wrote nothing, still reads from the replica.
    expect(await route(replicas, 8)).toBe('replica-0:5432/db');
    await replicas.pollPrimary();
    polled(replicas.replicas[0], 150n);
    expect(await route(replicas, 7)).toBe('replica-0:5432/db');
    await replicas.close();
  });

  it('shares write positions: an account that wrote on another instance waits for the replica here too', async () => {
    const shared = new MemoryPositions();
    const here = replicasOf(1, shared);
    const there = replicasOf(1, shared);
    polled(here.replicas.replicas[0], 100n);
    there.primary.lsn = 200n;
    await there.replicas.recordWrite(7);
    expect(shared.positions.get(7)).toBe(200n);
    expect(await route(here.replicas, 7)).toBe('primary');
    // (The read on the primary holds the account there until the primary's next poll: monotonic reads, below.)
    await here.replicas.pollPrimary();
    polled(here.replicas.replicas[0], 200n);
    expect(await route(here.replicas, 7)).toBe('replica-0:5432/db');
    await here.replicas.close();
    await there.replicas.close();
  });

  it('reads from the primary while the shared positions do not answer, and says so once', async () => {
    const shared = new MemoryPositions();
    const { replicas, lines } = replicasOf(1, shared);
    polled(replicas.replicas[0], 100n);
    shared.down = true;
    expect(await route(replicas, 7)).toBe('primary');
    expect(await route(replicas, 7)).toBe('primary');
    expect(await route(replicas, null)).toBe('replica-0:5432/db');
    shared.down = false;
    await replicas.pollPrimary();
    polled(replicas.replicas[0], 100n);
    expect(await route(replicas, 7)).toBe('replica-0:5432/db');
    expect(lines.filter((line) => line.includes('shared write positions'))).toEqual([
      expect.stringMatching(/^warn The shared write positions \(Redis\) do not answer/),
      'log The shared write positions (Redis) answer again',
    ]);
    await replicas.close();
  });

  it('never goes back in time for an account: after a read on a server, only one that replayed as far', async () => {
    const { primary, replicas } = replicasOf(2);
    const [a, b] = replicas.replicas;
    primary.lsn = 300n;
    await replicas.pollPrimary();
    polled(a, 300n);
    polled(b, 300n);
    a.inUse = false;
    b.inUse = false;
    // Both out: the account reads from the primary, whose position then is 300 at least; later 400.
    expect(await route(replicas, 7)).toBe('primary');
    // Until the primary is polled after that read, the account stays there.
    polled(a, 300n);
    expect(await route(replicas, 7)).toBe('primary');
    primary.lsn = 400n;
    await replicas.pollPrimary();
    // Polled after the read: the account may read from a replica that replayed 400, and `a` has 300 only.
    expect(await route(replicas, 7)).toBe('primary');
    await replicas.pollPrimary();
    polled(b, 400n);
    expect(await route(replicas, 7)).toBe('replica-1:5432/db');
    // Held to that replica until it is polled after the read; then any replica as far as its position then.
    polled(a, 400n);
    expect(await route(replicas, 7)).toBe('replica-1:5432/db');
    polled(b, 450n);
    expect(await route(replicas, 7)).toBe('replica-1:5432/db');
    // `b` out: `a` has replayed 400 only, less than what the account may have seen on `b`.
    polled(b, 460n);
    b.inUse = false;
    expect(await route(replicas, 7)).toBe('primary');
    await replicas.pollPrimary();
    polled(a, 460n);
    expect(await route(replicas, 7)).toBe('replica-0:5432/db');
    await replicas.close();
  });

  it('keeps one server for every statement of a request', async () => {
    const { replicas } = replicasOf(2);
    for (const replica of replicas.replicas) polled(replica, 10n);
    const scope = await replicas.scopeFor(null);
    const first = replicas.pick(scope);
    expect(first).toBeDefined();
    for (let i = 0; i < 5; i++) expect(replicas.pick(scope)).toBe(first);
    await replicas.close();
  });

  it('fails a replica over at once (one line) to the primary; a write or a conflict: a retry only', async () => {
    const { replicas, lines } = replicasOf(1);
    const [replica] = replicas.replicas;
    polled(replica, 10n);
    const retry = (error: unknown) => replicas.failed(new ReadScope(null, 0n), replica, error);
    const readOnly = new StoreUnavailableError('connection_lost', 'read-only', {
      cause: { driverError: { code: '25006' } },
    });
    expect(retry(readOnly)).toBe(true);
    expect(retry(new ConcurrentUpdateError('canceling statement due to conflict with recovery'))).toBe(true);
    expect(replica.inUse).toBe(true);
    expect(retry(new Error('a bug'))).toBe(false);
    expect(retry(new StoreUnavailableError('unreachable', 'connect ECONNREFUSED'))).toBe(true);
    expect(replica.inUse).toBe(false);
    expect(retry(new StoreUnavailableError('unreachable', 'connect ECONNREFUSED'))).toBe(true);
    expect(lines).toEqual([
      'warn Replica replica-0:5432/db out: a read failed: connect ECONNREFUSED; its reads go to the primary',
    ]);
    await replicas.close();
  });
});

describe("ReadReplicas: one client's slow statements", () => {
  /** A statement cancelled by the replica's statement_timeout, as TransactionHost translates it. */
  const cancelled = () =>
    new StoreUnavailableError('timeout', 'The database did not answer in time: canceling statement', {
      cause: Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }),
    });
  /** No connection of the replica's pool came free in time (pg-pool's message). */
  const poolFull = () =>
    new StoreUnavailableError('timeout', 'No database connection became available in time', {
      cause: new Error('timeout exceeded when trying to connect'),
    });

  it('leave the replica in; each is run again on the primary until its client has timed out too often', async () => {
    const { replicas, lines } = replicasOf(1);
    const [replica] = replicas.replicas;
    polled(replica, 10n);
    const counted: string[] = [];
    replicas.onTimeout = (target, rerun) => counted.push(`${target} ${rerun}`);
    const slowRead = (account: number | null, error = cancelled()) =>
      replicas.failed(new ReadScope(account, 0n), replica, error);

    // Account 7 times out 3 times (its statement, then a pool its own slow reads filled): each run on the primary.
    expect([slowRead(7), slowRead(7, poolFull()), slowRead(7)]).toEqual([true, true, true]);
    // A fourth this minute is answered as timed out: the primary is not made to pay for it again.
    expect(slowRead(7)).toBe(false);
    // Another client's statements are not held against it, and the replica serves everyone all along.
    expect(slowRead(8)).toBe(true);
    expect(replica.inUse).toBe(true);
    expect(await route(replicas, 9)).toBe('replica-0:5432/db');
    expect(lines).toEqual([]);
    expect(counted).toEqual([
      'replica-0:5432/db true',
      'replica-0:5432/db true',
      'replica-0:5432/db true',
      'replica-0:5432/db false',
      'replica-0:5432/db true',
    ]);
    // A reply that never came (the server stopped answering) is the replica's health: out.
    const lost = new StoreUnavailableError('timeout', 'The database did not answer in time', {
      cause: new Error('Query read timeout'),
    });
    expect(slowRead(9, lost)).toBe(true);
    expect(replica.inUse).toBe(false);
    await replicas.close();
  });
});

describe('ReadReplicas: polling (real PostgreSQL)', () => {
  it("polls on a connection of its own: a replica's pool full of slow statements does not delay its poll", async () => {
    const url = await testDatabaseUrl();
    const primary = new DatabasePool(url);
    const lines: string[] = [];
    const replicas = new ReadReplicas(primary, {
      urls: [url],
      maxLagMs: 1000,
      pollTimeoutMs: 1000,
      limits: { ...DEFAULT_POOL_LIMITS, max: 2 },
      logger: { log: (line) => lines.push(line), warn: (line) => lines.push(line) },
    });
    const [replica] = replicas.replicas;
    // Every connection of the requests' pool busy for 3 s (one client's slow reads).
    const slow = [replica.pool.query('SELECT pg_sleep(3)'), replica.pool.query('SELECT pg_sleep(3)')];
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(replica.pool.waitingCount + replica.pool.totalCount).toBeGreaterThanOrEqual(2);
      await replicas.poll();
      // The poll answered (this server is no standby, and says so) instead of timing out behind the slow reads.
      expect(lines).toEqual([expect.stringMatching(/out: it is not a standby/)]);
      expect(lines.join('\n')).not.toMatch(/does not answer/);
    } finally {
      await Promise.all(slow);
      await replicas.close();
      await primary.close();
    }
  });

  it('keeps a server that is not a standby out, saying so once however often it is polled', async () => {
    const url = await testDatabaseUrl();
    await resetDatabase(url);
    const primary = new DatabasePool(url);
    const lines: string[] = [];
    const replicas = new ReadReplicas(primary, {
      urls: [url],
      maxLagMs: 1000,
      logger: { log: (line) => lines.push(line), warn: (line) => lines.push(line) },
    });
    try {
      await replicas.poll();
      await replicas.poll();
      const [replica] = replicas.replicas;
      expect({ inUse: replica.inUse, answers: replica.answers }).toEqual({ inUse: false, answers: false });
      expect(lines).toEqual([
        expect.stringMatching(/^Replica .* out: it is not a standby \(pg_is_in_recovery\(\) is false\)/),
      ]);
      // The primary's position was read.
      expect(await replicas.scopeFor(1)).toMatchObject({ target: 'primary' });
    } finally {
      await replicas.close();
      await primary.close();
    }
  });

  it('takes a replica that does not answer out, once', async () => {
    const url = await testDatabaseUrl();
    const primary = new DatabasePool(url);
    const lines: string[] = [];
    // Port 1: nothing listens (connection refused at once).
    const replicas = new ReadReplicas(primary, {
      urls: ['postgres://postgres@127.0.0.1:1/nothing'],
      maxLagMs: 1000,
      logger: { log: (line) => lines.push(line), warn: (line) => lines.push(line) },
    });
    try {
      await replicas.poll();
      await replicas.poll();
      expect(replicas.replicas[0].inUse).toBe(false);
      expect(lines).toEqual([expect.stringMatching(/^Replica 127\.0\.0\.1:1\/nothing out: it does not answer: /)]);
    } finally {
      await replicas.close();
      await primary.close();
    }
  });
});
