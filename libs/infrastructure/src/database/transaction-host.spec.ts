import { ConstraintViolationError, StoreUnavailableError } from '@petstore/application';
import { resetDatabase, testDatabaseUrl } from '@petstore/testing';
import { DataSource, QueryFailedError } from 'typeorm';
import { createDataSource, DEFAULT_POOL_LIMITS, transactionBoundsSql } from './data-source';
import { violated } from './driver-errors';
import { TransactionHost, TransactionPreamble } from './transaction-host';

/** What a promise rejected with (fails when it did not). */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );
}

describe('TransactionHost.query/execute: straight on pg, with the errors of manager.query (real PostgreSQL)', () => {
  let url: string;
  let dataSource: DataSource;
  let host: TransactionHost;

  beforeAll(async () => {
    url = await testDatabaseUrl();
    await resetDatabase(url);
    dataSource = await createDataSource(url).initialize();
    host = new TransactionHost(dataSource);
    await dataSource.query(`CREATE TABLE IF NOT EXISTS host_statements (id int PRIMARY KEY, note text)`);
  });

  afterAll(async () => {
    await dataSource.query('DROP TABLE IF EXISTS host_statements');
    await dataSource.destroy();
  });

  const pid = async (on: TransactionHost) => (await on.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0].pid;

  it('returns the rows, and with execute the count of rows affected', async () => {
    expect(
      await host.query('INSERT INTO host_statements (id, note) VALUES (1, $1), (2, $1) RETURNING id', ['a']),
    ).toEqual([{ id: 1 }, { id: 2 }]);
    expect(await host.query('SELECT id, note FROM host_statements WHERE id = $1', [1])).toEqual([{ id: 1, note: 'a' }]);
    expect(await host.execute(`UPDATE host_statements SET note = 'b'`)).toEqual({ rows: [], affected: 2 });
    expect(await host.execute('DELETE FROM host_statements WHERE id = $1 RETURNING id', [2])).toEqual({
      rows: [{ id: 2 }],
      affected: 1,
    });
    expect(await host.execute('DELETE FROM host_statements WHERE id = $1', [2])).toEqual({ rows: [], affected: 0 });
  });

  it("inside UnitOfWork.run, on the transaction's own connection: sees and rolls back with the rest", async () => {
    const outcome = await failure(
      host.transaction(async () => {
        await host.manager.query(`INSERT INTO host_statements (id, note) VALUES (10, 'typeorm')`);
        await host.query(`INSERT INTO host_statements (id, note) VALUES (11, 'host')`);
        expect(await pid(host)).toBe((await host.manager.query('SELECT pg_backend_pid() AS pid'))[0].pid);
        expect(await host.query('SELECT id FROM host_statements WHERE id IN (10, 11) ORDER BY id')).toEqual([
          { id: 10 },
          { id: 11 },
        ]);
        throw new Error('roll back');
      }),
    );
    expect(outcome).toEqual(new Error('roll back'));
    expect(await host.query('SELECT id FROM host_statements WHERE id IN (10, 11)')).toEqual([]);
  });

  it('a unique violation, in and out of a transaction, as violated() reads it (QueryFailedError: cause)', async () => {
    await host.query(`INSERT INTO host_statements (id) VALUES (20)`);
    const outside = await failure(host.query(`INSERT INTO host_statements (id) VALUES (20)`));
    expect(outside).toBeInstanceOf(ConstraintViolationError);
    expect(violated(outside, 'unique', 'host_statements_pkey')).toBe(true);
    expect((outside as Error).cause).toBeInstanceOf(QueryFailedError);

    const inside = await failure(
      host.transaction(async () => {
        try {
          await host.query(`INSERT INTO host_statements (id) VALUES (20)`);
        } catch (error) {
          expect(violated(error, 'unique', 'host_statements_pkey')).toBe(true);
          throw error;
        }
      }),
    );
    expect(inside).toBeInstanceOf(ConstraintViolationError);
    expect(inside).toMatchObject({ constraintKind: 'unique', constraint: 'host_statements_pkey' });
  });

  it('a constraint violation keeps its pooled connection (pool.query would drop it)', async () => {
    const single = await createDataSource(url, {}, { ...DEFAULT_POOL_LIMITS, max: 1 }).initialize();
    try {
      const one = new TransactionHost(single);
      const before = await pid(one);
      await failure(one.query(`INSERT INTO host_statements (id) VALUES (20)`));
      expect(await pid(one)).toBe(before);
    } finally {
      await single.destroy();
    }
  });

  it('a connection lost outside a transaction: the 503 path, and the next statement works', async () => {
    const lost = await failure(host.query('SELECT pg_terminate_backend(pg_backend_pid())'));
    expect(lost).toBeInstanceOf(StoreUnavailableError);
    expect(lost).toMatchObject({ reason: 'connection_lost' });
    expect(await host.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });

  it('a connection lost in a transaction, during a statement and between two', async () => {
    const lostDuring = await failure(
      host.transaction(async () => {
        await host.query('SELECT pg_terminate_backend(pg_backend_pid()), pg_sleep(1)');
      }),
    );
    expect(lostDuring).toBeInstanceOf(StoreUnavailableError);
    expect(lostDuring).toMatchObject({ reason: 'connection_lost' });

    const lostBetween = await failure(
      host.transaction(async () => {
        const backend = await pid(host);
        const client = await (host.manager.queryRunner?.connect() as Promise<NodeJS.EventEmitter>);
        const gone = new Promise((resolve) => client.once('error', resolve));
        await dataSource.query('SELECT pg_terminate_backend($1)', [backend]);
        await gone; // pg has reported it and TypeORM has released the runner (and its client)
        await host.query('SELECT 1');
      }),
    );
    expect(lostBetween).toBeInstanceOf(StoreUnavailableError);
    expect(lostBetween).toMatchObject({ reason: 'connection_lost' });
    expect(await host.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });

  it('a reply over query_timeout, outside and inside a transaction: its connection is dropped', async () => {
    const limits = { ...DEFAULT_POOL_LIMITS, max: 1, statementTimeoutMs: 10_000, queryTimeoutMs: 200 };
    const bounded = await createDataSource(url, {}, limits).initialize();
    try {
      const one = new TransactionHost(bounded);
      const first = await pid(one);
      expect(await failure(one.query('SELECT pg_sleep(5)'))).toMatchObject({ reason: 'timeout' });
      const second = await pid(one);
      expect(second).not.toBe(first);
      const inside = await failure(one.transaction(() => one.query('SELECT pg_sleep(5)')));
      expect(inside).toMatchObject({ reason: 'timeout' });
      expect(await pid(one)).not.toBe(second);
    } finally {
      await bounded.destroy();
    }
  });
});

describe('TransactionHost behind a transaction pooler (PoolLimits.viaPooler): the bounds ride each transaction', () => {
  it('sends no start-up bounds, and sets both with SET LOCAL at the start of every transaction', async () => {
    const url = await testDatabaseUrl();
    const limits = {
      ...DEFAULT_POOL_LIMITS,
      statementTimeoutMs: 1234,
      idleInTransactionTimeoutMs: 4321,
      viaPooler: true,
    };
    const pooled = await createDataSource(url, {}, limits).initialize();
    const host = new TransactionHost(pooled, new TransactionPreamble(transactionBoundsSql(limits)));
    const bounds = (on: TransactionHost) =>
      on.query<{ name: string; setting: string }>(
        `SELECT name, setting FROM pg_settings
          WHERE name IN ('statement_timeout', 'idle_in_transaction_session_timeout') ORDER BY name`,
      );
    try {
      // Outside a transaction: the session's own values (no start-up parameters were sent).
      const outside = await bounds(host);
      expect(outside.map((row) => row.setting)).not.toContain('1234');
      const inside = await host.transaction(() => bounds(host));
      expect(inside).toEqual([
        { name: 'idle_in_transaction_session_timeout', setting: '4321' },
        { name: 'statement_timeout', setting: '1234' },
      ]);
      // SET LOCAL ends with its transaction: the session handed back to the pooler is as it was.
      expect(await bounds(host)).toEqual(outside);
      // And it is enforced: a statement over the bound is cancelled inside a transaction.
      await expect(host.transaction(() => host.query('SELECT pg_sleep(2)'))).rejects.toThrow();
    } finally {
      await pooled.destroy();
    }
  });
});
