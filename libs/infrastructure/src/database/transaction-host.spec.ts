import { ConstraintViolationError, StoreUnavailableError } from '@petstore/application';
import { resetDatabase, testDatabaseUrl } from '@petstore/testing';
import { DataSource, QueryFailedError } from 'typeorm';
import { createDataSource, DEFAULT_POOL_LIMITS, transactionBoundsSql } from './data-source';
import { DatabasePool } from './database-pool';
import { violated } from './driver-errors';
import { SequenceBlocks } from './next-id';
import { heldWrite } from './session/held-write';
import { plannedEachRun, TransactionHost, TransactionPreamble } from './transaction-host';
import { nextClient, spyOnClient } from '../../test/support/pool-spy';

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
  let pool: DatabasePool;
  let host: TransactionHost;

  beforeAll(async () => {
    url = await testDatabaseUrl();
    await resetDatabase(url);
    dataSource = await createDataSource(url).initialize();
    pool = new DatabasePool(url);
    host = new TransactionHost(pool);
    await dataSource.query(`CREATE TABLE IF NOT EXISTS host_statements (id int PRIMARY KEY, note text)`);
  });

  afterAll(async () => {
    await dataSource.query('DROP TABLE IF EXISTS host_statements');
    await pool.close();
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
        await host.query(`INSERT INTO host_statements (id, note) VALUES (10, 'first')`);
        const backend = await pid(host);
        await host.query(`INSERT INTO host_statements (id, note) VALUES (11, 'second')`);
        expect(await pid(host)).toBe(backend);
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
    const single = new DatabasePool(url, { ...DEFAULT_POOL_LIMITS, max: 1 });
    try {
      const one = new TransactionHost(single);
      const before = await pid(one);
      await failure(one.query(`INSERT INTO host_statements (id) VALUES (20)`));
      expect(await pid(one)).toBe(before);
    } finally {
      await single.close();
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

    const taken = nextClient(pool);
    const lostBetween = await failure(
      host.transaction(async () => {
        const backend = await pid(host);
        const client = await taken;
        const gone = new Promise((resolve) => client.once('error', resolve));
        await dataSource.query('SELECT pg_terminate_backend($1)', [backend]);
        await gone; // pg has reported it
        await host.query('SELECT 1');
      }),
    );
    expect(lostBetween).toBeInstanceOf(StoreUnavailableError);
    expect(lostBetween).toMatchObject({ reason: 'connection_lost' });
    expect(await host.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });

  it('a reply over query_timeout, outside and inside a transaction: its connection is dropped', async () => {
    const limits = { ...DEFAULT_POOL_LIMITS, max: 1, statementTimeoutMs: 10_000, queryTimeoutMs: 200 };
    const bounded = new DatabasePool(url, limits);
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
      await bounded.close();
    }
  });
});

const UPDATE_NOTE = heldWrite({
  verb: 'update',
  table: 'held_notes',
  params: 2,
  sql: (p) => `UPDATE held_notes SET note = ${p(2)} WHERE id = ${p(1)}`,
});
const APPEND_TO_NOTE = heldWrite({
  verb: 'update',
  table: 'held_notes',
  params: 2,
  sql: (p) => `UPDATE held_notes SET note = note || ${p(2)} WHERE id = ${p(1)}`,
});
const LOG = heldWrite({
  verb: 'insert',
  table: 'held_log',
  params: 2,
  sql: (p) => `INSERT INTO held_log (id, what) VALUES (${p(1)}, ${p(2)})`,
});

describe('TransactionHost.hold: writes sent together, in one statement, before the next statement or commit', () => {
  let dataSource: DataSource;
  let pool: DatabasePool;
  let host: TransactionHost;

  beforeAll(async () => {
    const url = await testDatabaseUrl();
    dataSource = await createDataSource(url).initialize();
    pool = new DatabasePool(url);
    host = new TransactionHost(pool);
    await dataSource.query(`CREATE TABLE IF NOT EXISTS held_notes (id int PRIMARY KEY, note text NOT NULL)`);
    await dataSource.query(`CREATE TABLE IF NOT EXISTS held_log (id int PRIMARY KEY, what text NOT NULL)`);
  });

  beforeEach(async () => {
    await dataSource.query('TRUNCATE held_notes, held_log');
    await dataSource.query(`INSERT INTO held_notes (id, note) VALUES (1, 'a'), (2, 'b')`);
  });

  afterAll(async () => {
    await dataSource.query('DROP TABLE IF EXISTS held_notes, held_log');
    await pool.close();
    await dataSource.destroy();
  });

  /**
   * The statements the transaction's connection is sent while `work` runs and at the commit, but its BEGIN and
   * COMMIT, and how many writes reached its socket (a spy, not a mock).
   */
  async function statementsOf(work: () => Promise<void>): Promise<string[]> {
    return (await sentBy(work)).texts.filter((sql) => sql !== 'BEGIN' && sql !== 'COMMIT');
  }

  async function sentBy(work: () => Promise<void>): Promise<{ texts: string[]; socketWrites: number }> {
    const taken = nextClient(pool);
    let spy: ReturnType<typeof spyOnClient> | undefined;
    try {
      await host.transaction(async () => {
        spy = spyOnClient(await taken);
        await work();
      });
    } finally {
      spy?.restore();
    }
    return { texts: spy?.texts ?? [], socketWrites: spy?.socketWrites() ?? 0 };
  }

  const notes = () => dataSource.query(`SELECT id, note FROM held_notes ORDER BY id`);

  it('three writes of an order (an update checked, two inserts) are one statement, sent at the commit', async () => {
    const sent = await statementsOf(async () => {
      await host.hold(UPDATE_NOTE, [1, 'x'], {
        rows: 1,
        mismatch: () => new Error('no note 1'),
      });
      await host.hold(LOG, [1, 'first']);
      await host.hold(LOG, [2, 'second']);
      // Nothing sent yet: a concurrent reader still sees the note as it was.
      expect(await dataSource.query(`SELECT note FROM held_notes WHERE id = 1`)).toEqual([{ note: 'a' }]);
    });
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatch(/^WITH w0 AS \(UPDATE held_notes .* w1 AS \(INSERT .* w2 AS \(INSERT/s);
    expect(await notes()).toEqual([
      { id: 1, note: 'x' },
      { id: 2, note: 'b' },
    ]);
    expect(await dataSource.query(`SELECT id, what FROM held_log ORDER BY id`)).toEqual([
      { id: 1, what: 'first' },
      { id: 2, what: 'second' },
    ]);
  });

  it("an order's shape is two writes to the socket: BEGIN with the lock, the held writes with COMMIT", async () => {
    const { texts, socketWrites } = await sentBy(async () => {
      expect(await host.query(`SELECT note FROM held_notes WHERE id = $1 FOR UPDATE`, [1])).toEqual([{ note: 'a' }]);
      await host.hold(UPDATE_NOTE, [1, 'x'], {
        rows: 1,
        mismatch: () => new Error('no note 1'),
      });
      await host.hold(LOG, [1, 'ordered']);
    });
    expect(texts).toEqual([
      'BEGIN',
      expect.stringMatching(/FOR UPDATE$/),
      expect.stringMatching(/^WITH w0 AS \(UPDATE held_notes .* w1 AS \(INSERT/s),
      'COMMIT',
    ]);
    expect(socketWrites).toBe(2);
    expect((await notes())[0]).toEqual({ id: 1, note: 'x' });
    expect(await dataSource.query(`SELECT id, what FROM held_log`)).toEqual([{ id: 1, what: 'ordered' }]);
  });

  it('a transaction of held writes only is one write: BEGIN, the writes and COMMIT together', async () => {
    const { texts, socketWrites } = await sentBy(async () => {
      await host.hold(LOG, [1, 'alone']);
    });
    expect(texts).toEqual(['BEGIN', 'INSERT INTO held_log (id, what) VALUES ($1, $2)', 'COMMIT']);
    expect(socketWrites).toBe(1);
    expect(await dataSource.query(`SELECT id, what FROM held_log`)).toEqual([{ id: 1, what: 'alone' }]);
  });

  it('a failing first statement, sent with BEGIN: nothing stays and the connection serves the next one', async () => {
    const single = new DatabasePool(await testDatabaseUrl(), { ...DEFAULT_POOL_LIMITS, max: 1 });
    try {
      const one = new TransactionHost(single);
      const outcome = await failure(
        one.transaction(async () => {
          await one.query(`INSERT INTO held_notes (id, note) VALUES (1, 'again')`);
        }),
      );
      expect(outcome).toMatchObject({ constraintKind: 'unique' });
      expect(await one.transaction(() => one.query(`SELECT count(*)::int AS n FROM held_notes`))).toEqual([{ n: 2 }]);
      expect(await one.query(`SELECT pg_current_xact_id_if_assigned() IS NULL AS idle`)).toEqual([{ idle: true }]);
    } finally {
      await single.close();
    }
  });

  it('a statement after held writes sees them: they are sent first', async () => {
    const seen = await host.transaction(async () => {
      await host.hold(UPDATE_NOTE, [2, 'y']);
      return host.query(`SELECT note FROM held_notes WHERE id = 2`);
    });
    expect(seen).toEqual([{ note: 'y' }]);
  });

  it('a write to a table another held write updates sends the batch first, so it sees that update', async () => {
    const sent = await statementsOf(async () => {
      await host.hold(APPEND_TO_NOTE, [1, 'b']);
      await host.hold(APPEND_TO_NOTE, [1, 'c']);
    });
    expect(sent).toHaveLength(2);
    expect((await notes())[0]).toEqual({ id: 1, note: 'abc' });
  });

  it('a checked write that writes another count of rows fails the transaction; nothing stays', async () => {
    const outcome = await failure(
      host.transaction(async () => {
        await host.hold(LOG, [3, 'kept?']);
        await host.hold(UPDATE_NOTE, [99, 'z'], {
          rows: 1,
          mismatch: () => new Error('no note 99'),
        });
      }),
    );
    expect(outcome).toEqual(new Error('no note 99'));
    expect(await dataSource.query(`SELECT count(*)::int AS n FROM held_log`)).toEqual([{ n: 0 }]);
  });

  it('the row check costs nothing when the count matches: petstore_expect_rows runs only on another', async () => {
    const calls = () =>
      host.query<{ n: string | null }>(
        `SELECT pg_stat_get_xact_function_calls('petstore_expect_rows(int, bigint, bigint)'::regprocedure) AS n`,
      );
    const [held, direct] = await host.transaction(async () => {
      // This transaction's own function counts (superuser: the tests' role), read before its end.
      await host.query(`SET LOCAL track_functions = 'pl'`);
      await host.hold(UPDATE_NOTE, [1, 'x'], { rows: 1, mismatch: () => new Error('no note 1') });
      await host.hold(LOG, [7, 'checked'], { rows: 1, mismatch: () => new Error('no log 7') });
      const afterHeld = await calls();
      // The control: a call is counted.
      await host.query('SELECT petstore_expect_rows(0, 1, 1)');
      return [afterHeld, await calls()];
    });
    expect(Number(held[0].n ?? 0)).toBe(0);
    expect(direct).toEqual([{ n: '1' }]);
  });

  it("a held write's constraint violation surfaces at the commit, translated, and rolls everything back", async () => {
    const outcome = await failure(
      host.transaction(async () => {
        await host.hold(UPDATE_NOTE, [1, 'changed']);
        await host.hold(LOG, [4, 'one']);
        await host.hold(LOG, [4, 'same id']);
      }),
    );
    expect(outcome).toBeInstanceOf(ConstraintViolationError);
    expect(outcome).toMatchObject({ constraintKind: 'unique', constraint: 'held_log_pkey' });
    expect((await notes())[0]).toEqual({ id: 1, note: 'a' });
  });

  it('outside a transaction a held write runs at once', async () => {
    await host.hold(UPDATE_NOTE, [2, 'now']);
    expect((await notes())[1]).toEqual({ id: 2, note: 'now' });
    await expect(
      host.hold(UPDATE_NOTE, [42, 'x'], {
        rows: 1,
        mismatch: () => new Error('no note 42'),
      }),
    ).rejects.toThrow('no note 42');
  });

  it('tells afterCommit listeners the tables changed (held, or reported), after a commit only', async () => {
    const listened = new TransactionHost(pool);
    const heard: string[][] = [];
    listened.afterCommit((tables) => heard.push([...tables].sort()));
    let committing: string[][] | undefined;
    await listened.transaction(async () => {
      await listened.hold(UPDATE_NOTE, [1, 'told']);
      await listened.query(`INSERT INTO held_log (id, what) VALUES (1, 'x')`);
      listened.changed('held_log');
      committing = [...heard];
    });
    // Nothing before the commit; both tables once it answered, before the unit of work's caller goes on.
    expect(committing).toEqual([]);
    expect(heard).toEqual([['held_log', 'held_notes']]);
    // A rollback tells nothing.
    await failure(
      listened.transaction(async () => {
        await listened.query(`INSERT INTO held_log (id, what) VALUES (2, 'y')`);
        listened.changed('held_log');
        throw new Error('rolled back');
      }),
    );
    expect(heard).toHaveLength(1);
    // Outside a transaction the statement committed on its own: told at once.
    await listened.query(`INSERT INTO held_log (id, what) VALUES (3, 'z')`);
    listened.changed('held_log');
    expect(heard).toEqual([['held_log', 'held_notes'], ['held_log']]);
  });

  it('a held write is declared with its verb and parameters: a text or values that differ are refused', () => {
    const declare = (verb: 'insert' | 'update', params: number, sql: (p: (n: number) => string) => string) => () =>
      heldWrite({ verb, table: 'held_log', params, sql });
    expect(declare('update', 2, (p) => `INSERT INTO held_log (id, what) VALUES (${p(1)}, ${p(2)})`)).toThrow(
      'declared update',
    );
    expect(declare('insert', 2, (p) => `INSERT INTO held_log (id, what) VALUES (${p(1)}, ${p(3)})`)).toThrow(
      'parameter 3 of 2',
    );
    expect(declare('insert', 3, (p) => `INSERT INTO held_log (id, what) VALUES (${p(1)}, ${p(2)})`)).toThrow(
      'declares 3 parameters, uses 2',
    );
    return expect(host.transaction(() => host.hold(LOG, [5]))).rejects.toThrow('takes 2 parameters, not 1');
  });

  it('numbers each write of a combined statement after the ones before it, and checks counts after them', () => {
    expect(LOG.text).toBe('INSERT INTO held_log (id, what) VALUES ($1, $2)');
    expect(UPDATE_NOTE.textAfter(4)).toBe('UPDATE held_notes SET note = $6 WHERE id = $5');
  });
});

describe('TransactionHost names its statements (parsed and planned once per connection), but behind a pooler', () => {
  const named = (on: TransactionHost) =>
    on.transaction(() =>
      on.query<{ statement: string }>(`SELECT statement FROM pg_prepared_statements WHERE from_sql = false`),
    );

  it('a statement sent twice on a connection is prepared there once, by name', async () => {
    const url = await testDatabaseUrl();
    const single = new DatabasePool(url, { ...DEFAULT_POOL_LIMITS, max: 1 });
    try {
      const host = new TransactionHost(single);
      const text = `SELECT count(*)::int AS n FROM pg_class WHERE relname = $1`;
      expect(await host.query(text, ['pg_class'])).toEqual([{ n: 1 }]);
      expect(await host.transaction(() => host.query(text, ['pg_type']))).toEqual([{ n: 1 }]);
      const statements = (await named(host)).map((row) => row.statement);
      expect(statements.filter((statement) => statement === text)).toHaveLength(1);
    } finally {
      await single.close();
    }
  });

  it('a statement marked plannedEachRun goes unnamed (planned for each run), the others stay named', async () => {
    const url = await testDatabaseUrl();
    const single = new DatabasePool(url, { ...DEFAULT_POOL_LIMITS, max: 1 });
    try {
      const host = new TransactionHost(single);
      const each = plannedEachRun(`SELECT count(*)::int AS n FROM pg_class WHERE relname = ANY($1::text[])`);
      const once = `SELECT count(*)::int AS n FROM pg_type WHERE typname = ANY($1::text[])`;
      expect(await host.query(each, [['pg_class', 'pg_type']])).toEqual([{ n: 2 }]);
      expect(await host.transaction(() => host.query(each, [['pg_class']]))).toEqual([{ n: 1 }]);
      await host.query(once, [['int4']]);
      const statements = (await named(host)).map((row) => row.statement);
      expect(statements).toContain(once);
      expect(statements).not.toContain(each);
    } finally {
      await single.close();
    }
  });

  it('behind a transaction pooler (a preamble given) every statement goes unnamed', async () => {
    const url = await testDatabaseUrl();
    const single = new DatabasePool(url, { ...DEFAULT_POOL_LIMITS, max: 1 });
    try {
      const host = new TransactionHost(single, new TransactionPreamble(`SET LOCAL statement_timeout = 5000`));
      await host.query(`SELECT 2 AS two WHERE $1::int = 1`, [1]);
      expect(await named(host)).toEqual([]);
    } finally {
      await single.close();
    }
  });
});

describe('SequenceBlocks: ids from a sequence in blocks (pooled-lo)', () => {
  let dataSource: DataSource;
  let pool: DatabasePool;
  let host: TransactionHost;

  beforeAll(async () => {
    dataSource = await createDataSource(await testDatabaseUrl()).initialize();
    pool = new DatabasePool(await testDatabaseUrl());
    host = new TransactionHost(pool);
    await dataSource.query(`DROP TABLE IF EXISTS blocked_ids`);
    await dataSource.query(`CREATE TABLE blocked_ids (id bigserial PRIMARY KEY)`);
  });

  afterAll(async () => {
    await dataSource.query('DROP TABLE IF EXISTS blocked_ids');
    await pool.close();
    await dataSource.destroy();
  });

  it('hands out distinct ids to concurrent callers of two processes and plain nextval, a block each', async () => {
    await dataSource.query(`ALTER SEQUENCE blocked_ids_id_seq INCREMENT BY 10`);
    const one = new SequenceBlocks('blocked_ids');
    const two = new SequenceBlocks('blocked_ids');
    const calls = () => dataSource.query(`SELECT last_value::int AS v FROM blocked_ids_id_seq`);
    const ids = await Promise.all([
      ...Array.from({ length: 25 }, () => one.take(host)),
      ...Array.from({ length: 25 }, () => host.transaction(() => two.take(host))),
      ...Array.from({ length: 3 }, async () =>
        Number((await host.query<{ id: string }>(`INSERT INTO blocked_ids DEFAULT VALUES RETURNING id`))[0].id),
      ),
    ]);
    expect(new Set(ids).size).toBe(ids.length);
    // Three blocks each (concurrent callers wait for one fetch) and the three plain ones: nine nextval calls.
    expect((await calls())[0].v).toBe(1 + 10 * (3 + 3 + 3 - 1));
    const sequential = [await one.take(host), await one.take(host)];
    expect(sequential[1]).toBe(sequential[0] + 1);
  });

  it('a sequence left at INCREMENT 1 gives blocks of one id', async () => {
    await dataSource.query(`ALTER SEQUENCE blocked_ids_id_seq INCREMENT BY 1`);
    const blocks = new SequenceBlocks('blocked_ids');
    const first = await blocks.take(host);
    const plain = Number((await host.query<{ id: string }>(`SELECT nextval('blocked_ids_id_seq') AS id`))[0].id);
    expect(plain).toBe(first + 1);
    expect(await blocks.take(host)).toBe(plain + 1);
  });

  it('at INCREMENT 1 reads the increment once: every later id is one plain nextval, none waits', async () => {
    await dataSource.query(`ALTER SEQUENCE blocked_ids_id_seq INCREMENT BY 1`);
    const blocks = new SequenceBlocks('blocked_ids');
    await blocks.take(host);
    const sent: string[] = [];
    const query = host.query.bind(host);
    const spy = jest.spyOn(host, 'query').mockImplementation((sql, params) => {
      sent.push(sql);
      return query(sql, params);
    });
    try {
      const ids = await Promise.all(Array.from({ length: 5 }, () => blocks.take(host)));
      expect(new Set(ids).size).toBe(5);
      expect(sent).toEqual(Array(5).fill('SELECT nextval($1::regclass) AS start'));
    } finally {
      spy.mockRestore();
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
    const pooled = new DatabasePool(url, limits);
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
      await pooled.close();
    }
  });
});
