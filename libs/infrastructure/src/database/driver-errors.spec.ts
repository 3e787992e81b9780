import {
  ConcurrentUpdateError,
  ConstraintViolationError,
  InvalidStoredValueError,
  OutcomeUnknownError,
  StoreUnavailableError,
} from '@petstore/application';
import { resetDatabase, testDatabaseUrl } from '@petstore/testing';
import { DataSource } from 'typeorm';
import { createDataSource, DEFAULT_POOL_LIMITS } from './data-source';
import { DatabasePool } from './database-pool';
import { TransactionHost } from './transaction-host';
import { nextClient } from '../../test/support/pool-spy';

/** What a promise rejected with (fails when it did not). */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );
}

describe('driver errors are translated once, into the persistence errors (real PostgreSQL)', () => {
  let url: string;
  let dataSource: DataSource;
  let pool: DatabasePool;

  beforeAll(async () => {
    url = await testDatabaseUrl();
    await resetDatabase(url);
    dataSource = await createDataSource(url).initialize();
    pool = new DatabasePool(url);
    await dataSource.query(`CREATE TABLE IF NOT EXISTS driver_errors (
      id int PRIMARY KEY, n int CONSTRAINT driver_errors_n_ck CHECK (n > 0), note text)`);
  });

  afterAll(async () => {
    await dataSource.query('DROP TABLE IF EXISTS driver_errors');
    await pool.close();
    await dataSource.destroy();
  });

  it('a unique violation and a check violation, with the constraint named', async () => {
    await dataSource.query('INSERT INTO driver_errors (id, n) VALUES (1, 1)');
    const unique = await failure(dataSource.query('INSERT INTO driver_errors (id, n) VALUES (1, 1)'));
    expect(unique).toBeInstanceOf(ConstraintViolationError);
    expect(unique).toMatchObject({ constraintKind: 'unique', constraint: 'driver_errors_pkey' });
    const check = await failure(dataSource.query('INSERT INTO driver_errors (id, n) VALUES (2, -1)'));
    expect(check).toMatchObject({ constraintKind: 'check', constraint: 'driver_errors_n_ck' });
  });

  it('text PostgreSQL cannot hold and text that is not of the type', async () => {
    const nul = await failure(
      dataSource.query('INSERT INTO driver_errors (id, n, note) VALUES (3, 1, $1)', ['a\u0000b']),
    );
    expect(nul).toBeInstanceOf(InvalidStoredValueError);
    expect(await failure(dataSource.query('SELECT $1::int', ['twelve']))).toBeInstanceOf(InvalidStoredValueError);
  });

  it('a serialization failure between two real transactions', async () => {
    await dataSource.query('INSERT INTO driver_errors (id, n) VALUES (10, 1), (11, 1)');
    const first = dataSource.createQueryRunner();
    const second = dataSource.createQueryRunner();
    try {
      await first.startTransaction('SERIALIZABLE');
      await second.startTransaction('SERIALIZABLE');
      // Each reads what the other writes: the second to commit cannot be serialised.
      await first.query('SELECT sum(n) FROM driver_errors WHERE id IN (10, 11)');
      await second.query('SELECT sum(n) FROM driver_errors WHERE id IN (10, 11)');
      await first.query('UPDATE driver_errors SET n = 5 WHERE id = 10');
      await second.query('UPDATE driver_errors SET n = 5 WHERE id = 11');
      await first.commitTransaction();
      expect(await failure(second.commitTransaction())).toBeInstanceOf(ConcurrentUpdateError);
    } finally {
      await second.rollbackTransaction().catch(() => undefined);
      await first.release();
      await second.release();
    }
  });

  it('a statement over statement_timeout, set on every pooled connection', async () => {
    const bounded = await createDataSource(url, {}, { ...DEFAULT_POOL_LIMITS, statementTimeoutMs: 200 }).initialize();
    try {
      expect(await bounded.query('SHOW statement_timeout')).toEqual([{ statement_timeout: '200ms' }]);
      expect(await bounded.query('SHOW idle_in_transaction_session_timeout')).toEqual([
        { idle_in_transaction_session_timeout: `${DEFAULT_POOL_LIMITS.idleInTransactionTimeoutMs / 1000}s` },
      ]);
      const error = await failure(bounded.query('SELECT pg_sleep(5)'));
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect(error).toMatchObject({ reason: 'timeout' });
      expect(await bounded.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await bounded.destroy();
    }
  });

  it('a reply over query_timeout (client side): its connection is dropped, the next query works', async () => {
    const limits = { ...DEFAULT_POOL_LIMITS, max: 1, statementTimeoutMs: 10_000, queryTimeoutMs: 200 };
    const bounded = await createDataSource(url, {}, limits).initialize();
    try {
      const [{ pid }] = await bounded.query('SELECT pg_backend_pid() AS pid');
      const error = await failure(bounded.query('SELECT pg_sleep(5)'));
      expect(error).toMatchObject({ reason: 'timeout' });
      // Not the connection still busy with pg_sleep: a new one, answering at once.
      const [{ pid: next }] = await bounded.query('SELECT pg_backend_pid() AS pid');
      expect(next).not.toBe(pid);
    } finally {
      await bounded.destroy();
    }
  });

  it('no pooled connection within the acquire timeout', async () => {
    const limits = { ...DEFAULT_POOL_LIMITS, max: 1, acquireTimeoutMs: 200 };
    const bounded = await createDataSource(url, {}, limits).initialize();
    const holder = bounded.createQueryRunner();
    try {
      await holder.connect();
      const error = await failure(bounded.query('SELECT 1'));
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect(error).toMatchObject({ reason: 'timeout' });
    } finally {
      await holder.release();
      await bounded.destroy();
    }
  });

  it('a connection lost in a transaction, even between statements', async () => {
    const host = new TransactionHost(pool);
    const taken = nextClient(pool);
    const lostBetween = await failure(
      host.transaction(async () => {
        const [{ pid }] = await host.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        const client = await taken;
        const gone = new Promise((resolve) => client.once('error', resolve));
        await dataSource.query('SELECT pg_terminate_backend($1)', [pid]);
        await gone; // pg has reported it
        await host.query('SELECT 1');
      }),
    );
    expect(lostBetween).toBeInstanceOf(StoreUnavailableError);
    expect(lostBetween).toMatchObject({ reason: 'connection_lost' });

    const lostDuring = await failure(
      host.transaction(async () => {
        const [{ pid }] = await host.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        await host.query('SELECT pg_terminate_backend($1), pg_sleep(1)', [pid]);
      }),
    );
    expect(lostDuring).toBeInstanceOf(StoreUnavailableError);
    expect(await dataSource.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });

  it('a read-only session (a demoted primary, 25006): 503-class, and the connection leaves the pool', async () => {
    const limits = { ...DEFAULT_POOL_LIMITS, max: 1 };
    const single = await createDataSource(url, {}, limits).initialize();
    const singlePool = new DatabasePool(url, limits);
    const host = new TransactionHost(singlePool);
    try {
      // The pool's one connection becomes read-only, as a demoted primary's sessions do.
      const [{ pid }] = await host.query<{ pid: number }>('SELECT pg_backend_pid() AS pid, set_config($1, $2, false)', [
        'default_transaction_read_only',
        'on',
      ]);
      const inTransaction = await failure(
        host.transaction(() => host.query('SELECT * FROM driver_errors WHERE id = 1 FOR UPDATE')),
      );
      expect(inTransaction).toBeInstanceOf(StoreUnavailableError);
      expect(inTransaction).toMatchObject({ reason: 'connection_lost' });
      // Not lent again: the next transaction writes, on a new connection.
      const [{ pid: next }] = await host.transaction(async () => {
        await host.query('INSERT INTO driver_errors (id, n) VALUES (41, 1) ON CONFLICT DO NOTHING');
        return host.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      });
      expect(next).not.toBe(pid);

      // Outside a transaction, and through TypeORM's query runner: the same.
      await host.query('SELECT set_config($1, $2, false)', ['default_transaction_read_only', 'on']);
      const single1 = await failure(host.query('INSERT INTO driver_errors (id, n) VALUES (42, 1)'));
      expect(single1).toMatchObject({ reason: 'connection_lost' });
      await host.query('INSERT INTO driver_errors (id, n) VALUES (42, 1)');
      await single.query('SELECT set_config($1, $2, false)', ['default_transaction_read_only', 'on']);
      const viaRunner = await failure(single.query('INSERT INTO driver_errors (id, n) VALUES (43, 1)'));
      expect(viaRunner).toBeInstanceOf(StoreUnavailableError);
      await single.query('INSERT INTO driver_errors (id, n) VALUES (43, 1)');
    } finally {
      await singlePool.close();
      await single.destroy();
    }
  });

  it('a connection lost while its COMMIT is on its way: the outcome is unknown, not "unavailable"', async () => {
    const host = new TransactionHost(pool);
    // A deferred constraint trigger runs at COMMIT: this one ends its own session there.
    await dataSource.query(`CREATE OR REPLACE FUNCTION driver_errors_die() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NULL; END $$`);
    await dataSource.query(`CREATE CONSTRAINT TRIGGER driver_errors_die AFTER INSERT ON driver_errors
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.id = 99) EXECUTE FUNCTION driver_errors_die()`);
    try {
      const error = await failure(
        host.transaction(() => host.query('INSERT INTO driver_errors (id, n) VALUES (99, 1)')),
      );
      expect(error).toBeInstanceOf(OutcomeUnknownError);
      // Lost before the COMMIT was sent: nothing was done, and that is known.
      const before = await failure(
        host.transaction(async () => {
          const [{ pid }] = await host.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
          await host.query('SELECT pg_terminate_backend($1), pg_sleep(1)', [pid]);
        }),
      );
      expect(before).toBeInstanceOf(StoreUnavailableError);
      expect(await dataSource.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await dataSource.query('DROP TRIGGER IF EXISTS driver_errors_die ON driver_errors');
      await dataSource.query('DROP FUNCTION IF EXISTS driver_errors_die()');
    }
  });

  it('after a read-only answer, the pool closes every connection opened before it (stale sessions)', async () => {
    const limits = { ...DEFAULT_POOL_LIMITS, max: 3 };
    const pooled = new DatabasePool(url, limits);
    const host = new TransactionHost(pooled);
    try {
      // Three connections open at once, then idle in the pool: one of them turns read-only (25006).
      const pids = await Promise.all(
        [0, 1, 2].map(() =>
          host.transaction(async () => {
            const [{ pid }] = await host.query<{ pid: number }>('SELECT pg_backend_pid() AS pid, pg_sleep(0.2)');
            return pid;
          }),
        ),
      );
      expect(new Set(pids).size).toBe(3);
      const readOnly = await failure(
        host.transaction(async () => {
          await host.query('SET LOCAL transaction_read_only = on');
          await host.query('INSERT INTO driver_errors (id, n) VALUES (44, 1)');
        }),
      );
      expect(readOnly).toMatchObject({ reason: 'connection_lost' });
      // None of the others is lent again: each request gets a connection opened since.
      const after = await Promise.all(
        [0, 1, 2].map(() =>
          host.transaction(async () => {
            const [{ pid }] = await host.query<{ pid: number }>('SELECT pg_backend_pid() AS pid, pg_sleep(0.2)');
            return pid;
          }),
        ),
      );
      expect(after.filter((pid) => pids.includes(pid))).toEqual([]);
    } finally {
      await pooled.close();
    }
  });

  it('a database that refuses work (classes 55 and 57) is unavailable, never an unknown error', async () => {
    const { translateDriverError } = await import('./driver-errors');
    const refusals = [
      { code: '55000', message: 'database "x" is not currently accepting connections' },
      { code: '57P03', message: 'the database system is starting up' },
      { code: '57P03', message: 'the database system is shutting down' },
      { code: '57P04', message: 'database dropped' },
      { code: '57000', message: 'operator intervention' },
      { code: '55006', message: 'database "x" is being accessed by other users' },
    ];
    for (const fields of refusals) {
      expect(translateDriverError(Object.assign(new Error(fields.message), fields))).toBeInstanceOf(
        StoreUnavailableError,
      );
    }
  });

  it('a server that cannot be reached', async () => {
    const nowhere = createDataSource('postgres://nobody@127.0.0.1:1/none');
    const error = await failure(nowhere.initialize().then(() => nowhere.query('SELECT 1')));
    // initialize() itself connects: the pool error is raw there (start-up), but a query is translated.
    expect(error).toBeDefined();
    const { translateDriverError } = await import('./driver-errors');
    expect(translateDriverError(error)).toBeInstanceOf(StoreUnavailableError);
    expect(translateDriverError(error)).toMatchObject({ reason: 'unreachable' });
  });
});
