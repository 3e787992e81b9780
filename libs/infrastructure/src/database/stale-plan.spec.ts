import { resetDatabase, testDatabaseUrl } from '@petstore/testing';
import { Client } from 'pg';
import { DatabasePool } from './database-pool';
import { DEFAULT_POOL_LIMITS } from './data-source';
import { isStalePlan, TransactionHost } from './transaction-host';

/**
 * A migration changes a table under the named statements of pooled connections (issue 50: 1.0.0's prepared
 * `SELECT * FROM webhook_events` answered 500 once `EventCommitOrder` added a column). PostgreSQL refuses to run such
 * a statement again (SQLSTATE 0A000, "cached plan must not change result type"); TransactionHost prepares it anew
 * and runs it again, once: the statement outside a transaction, the whole unit of work inside one. The statements
 * here select `*` on purpose (the service's never do: column-order.spec.ts), as the previous release's did.
 */
describe('a statement whose plan a migration made stale is prepared anew and run again (real PostgreSQL)', () => {
  let url: string;
  let admin: Client;
  let pool: DatabasePool;
  let host: TransactionHost;

  beforeAll(async () => {
    url = await testDatabaseUrl();
    await resetDatabase(url);
    admin = new Client({ connectionString: url });
    await admin.connect();
  });
  beforeEach(async () => {
    await admin.query('DROP TABLE IF EXISTS stale_plan_probe');
    await admin.query(`CREATE TABLE stale_plan_probe (id int PRIMARY KEY, name text)`);
    await admin.query(`INSERT INTO stale_plan_probe (id, name) VALUES (1, 'Rex')`);
    // One connection: the statement surely runs again where its plan was prepared.
    pool = new DatabasePool(url, { ...DEFAULT_POOL_LIMITS, max: 1 });
    host = new TransactionHost(pool);
  });
  afterEach(() => pool.close());
  afterAll(async () => {
    await admin.query('DROP TABLE IF EXISTS stale_plan_probe');
    await admin.end();
  });

  const SELECT_ALL = 'SELECT * FROM stale_plan_probe WHERE id = $1';
  const addColumn = () => admin.query(`ALTER TABLE stale_plan_probe ADD COLUMN born date`);

  it('is what PostgreSQL answers a prepared statement after the change (what the host recognises)', async () => {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      await client.query({ name: 'probe', text: SELECT_ALL, values: [1] });
      await addColumn();
      const error = await client.query({ name: 'probe', text: SELECT_ALL, values: [1] }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: '0A000' });
      expect(isStalePlan(error)).toBe(true);
    } finally {
      await client.end();
    }
  });

  it('outside a transaction: the statement runs again and answers with the new columns', async () => {
    expect(await host.query(SELECT_ALL, [1])).toEqual([{ id: 1, name: 'Rex' }]);
    await addColumn();
    expect(await host.query(SELECT_ALL, [1])).toEqual([{ id: 1, name: 'Rex', born: null }]);
    expect(await host.query(SELECT_ALL, [1])).toEqual([{ id: 1, name: 'Rex', born: null }]);
  });

  it('inside a unit of work: the work runs again from the start, once; what its first run wrote is gone', async () => {
    const work = async () => {
      runs++;
      await host.query(`UPDATE stale_plan_probe SET name = name || '!' WHERE id = 1`);
      return host.query(SELECT_ALL, [1]);
    };
    let runs = 0;
    expect(await host.transaction(work)).toEqual([{ id: 1, name: 'Rex!' }]);
    await addColumn();
    runs = 0;
    // The first run's UPDATE rolled back with it: one '!' more, not two.
    expect(await host.transaction(work)).toEqual([{ id: 1, name: 'Rex!!', born: null }]);
    expect(runs).toBe(2);
  });

  it('a type changed under an explicit column list is the same failure, and the same cure', async () => {
    const SELECT_LISTED = 'SELECT id, name FROM stale_plan_probe WHERE id = $1';
    expect(await host.query(SELECT_LISTED, [1])).toEqual([{ id: 1, name: 'Rex' }]);
    await admin.query('ALTER TABLE stale_plan_probe ALTER COLUMN id TYPE bigint');
    expect(await host.query(SELECT_LISTED, [1])).toEqual([{ id: '1', name: 'Rex' }]);
  });
});
