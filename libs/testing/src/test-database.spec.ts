import { Client } from 'pg';
import { DataSource } from 'typeorm';
import {
  TEST_DATABASE_ENV,
  assertTestDatabaseUrl,
  databaseNameOf,
  resetDatabase,
  testDatabaseUrl,
} from './test-database';

async function query<T extends Record<string, unknown>>(
  url: string,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

describe('test database plumbing', () => {
  let url: string;

  beforeAll(async () => {
    url = await testDatabaseUrl();
  });

  it("gives each jest worker its own database, copied from the run's template", async () => {
    const name = databaseNameOf(url);
    const runId = process.env[TEST_DATABASE_ENV.runId];
    expect(name).toBe(`petstore_test_w${process.env['JEST_WORKER_ID']}_${runId}`);
    await expect(query(url, 'SELECT current_database() AS name')).resolves.toEqual([{ name }]);
    // a second call (another file of the same worker) gets the same database
    await expect(testDatabaseUrl()).resolves.toBe(url);
  });

  it('has the migrations applied', async () => {
    const tables = await query<{ name: string }>(
      url,
      'SELECT tablename AS name FROM pg_tables ' +
        "WHERE schemaname = 'public' AND tablename IN ('categories', 'schema_migrations')",
    );
    expect(tables.map((t) => t.name).sort()).toEqual(['categories', 'schema_migrations']);
    const [{ count }] = await query<{ count: number }>(url, 'SELECT count(*)::int AS count FROM schema_migrations');
    expect(count).toBeGreaterThan(0);
  });

  it('resetDatabase empties every table and restarts identities, but keeps the migrations', async () => {
    const [{ migrations }] = await query<{ migrations: number }>(
      url,
      'SELECT count(*)::int AS migrations FROM schema_migrations',
    );
    // Another spec of this jest worker may have left rows in the worker's database: start from none.
    await resetDatabase(url);
    await query(url, "INSERT INTO categories (name, name_key) VALUES ('Dogs', 'dogs'), ('Cats', 'cats')");

    await resetDatabase(url);

    await expect(query(url, 'SELECT count(*)::int AS count FROM categories')).resolves.toEqual([{ count: 0 }]);
    await expect(query(url, 'SELECT count(*)::int AS count FROM schema_migrations')).resolves.toEqual([
      { count: migrations },
    ]);
    const [{ id }] = await query<{ id: string }>(
      url,
      "INSERT INTO categories (name, name_key) VALUES ('Birds', 'birds') RETURNING id",
    );
    expect(id).toBe('1');

    // the same through a TypeORM DataSource, as repository tests hold one
    const dataSource = await new DataSource({ type: 'postgres', url }).initialize();
    try {
      await resetDatabase(dataSource);
    } finally {
      await dataSource.destroy();
    }
    await expect(query(url, 'SELECT count(*)::int AS count FROM categories')).resolves.toEqual([{ count: 0 }]);
  });

  it('refuses a database whose name lacks "test"', async () => {
    expect(() => assertTestDatabaseUrl('postgres://postgres@127.0.0.1:5432/petstore')).toThrow(/lacks "test"/);
    expect(() => assertTestDatabaseUrl('postgres://postgres@127.0.0.1:5432/')).toThrow(/lacks "test"/);
    expect(() => assertTestDatabaseUrl('postgres://postgres@127.0.0.1:5432/petstore_test')).not.toThrow();
    // before connecting: no server listens on port 1
    await expect(resetDatabase('postgres://postgres@127.0.0.1:1/petstore')).rejects.toThrow(/lacks "test"/);
  });
});
