import { Client } from 'pg';
import type { DataSource } from 'typeorm';

/**
 * The test database helpers used by integration tests (repositories, use cases, HTTP).
 *
 * The jest global setup (`tools/jest/global-setup.ts`) picks a PostgreSQL server, creates one migrated
 * template database per run and publishes it through the environment variables below; jest
 * workers are forked afterwards and inherit them. Each worker then gets its own database, copied
 * from the template on first use, so test files in different workers never share rows.
 */
export const TEST_DATABASE_ENV = {
  /** A URL of the chosen server whose database name contains `test` (used for CREATE/DROP DATABASE). */
  serverUrl: 'PETSTORE_TEST_SERVER_URL',
  /** The migrated template database of this run. */
  template: 'PETSTORE_TEST_TEMPLATE_DB',
  /** `<pid>_<random>`, part of every database name this run creates. */
  runId: 'PETSTORE_TEST_RUN_ID',
} as const;

/** Every database the test tooling creates starts with this (and so contains `test`). */
export const TEST_DATABASE_PREFIX = 'petstore_test_';

const MIGRATIONS_TABLE = 'schema_migrations';
/** pg-boss's schema, created by the application at start-up. */
const JOB_QUEUE_SCHEMA = 'pgboss';

/** The database name in a PostgreSQL URL (`postgres://user@host:port/<name>`), decoded. */
export function databaseNameOf(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error('Not a valid PostgreSQL URL (expected postgres://user:password@host:port/database).');
  }
  return decodeURIComponent(parsed.pathname.replace(/^\//, ''));
}

/** The same server and credentials, another database. */
export function withDatabaseName(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
}

/**
 * Integration tests truncate and drop what they find: they refuse a database whose name does not
 * contain `test`, so that a production or development URL can never be wiped by a test run.
 */
export function assertTestDatabaseName(database: string, source?: string): void {
  if (!/test/i.test(database)) {
    throw new Error(
      `The database "${database || '(none)'}"${source ? ` of ${source}` : ''} lacks "test" in its name: ` +
        'integration tests refuse to run against it. Point TEST_DATABASE_URL at a database whose name contains "test".',
    );
  }
}

export function assertTestDatabaseUrl(url: string, source?: string): void {
  assertTestDatabaseName(databaseNameOf(url), source);
}

let workerDatabase: Promise<string> | undefined;

/**
 * The URL of this jest worker's own database (`petstore_test_w<JEST_WORKER_ID>_<runId>`), created
 * from the run's migrated template the first time a test file of the worker asks for it. Later
 * files in the same worker get the same database: call `resetDatabase` before each test.
 */
export function testDatabaseUrl(): Promise<string> {
  workerDatabase ??= createWorkerDatabase().catch((error: unknown) => {
    workerDatabase = undefined;
    throw error;
  });
  return workerDatabase;
}

async function createWorkerDatabase(): Promise<string> {
  const serverUrl = process.env[TEST_DATABASE_ENV.serverUrl];
  const template = process.env[TEST_DATABASE_ENV.template];
  const runId = process.env[TEST_DATABASE_ENV.runId];
  if (!serverUrl || !template || !runId) {
    throw new Error(
      'No test database server: the jest config of this project must declare ' +
        'globalSetup/globalTeardown from libs/testing/src (see libs/infrastructure/jest.config.cts).',
    );
  }
  assertTestDatabaseUrl(serverUrl);
  const name = `${TEST_DATABASE_PREFIX}w${process.env['JEST_WORKER_ID'] ?? '1'}_${runId}`;
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) await createFromTemplate(client, name, template);
  } finally {
    await client.end();
  }
  return withDatabaseName(serverUrl, name);
}

/**
 * Creates the database `name` (which must contain `test`) on the run's server, through `client` (connected to that
 * server), as a copy of the run's migrated template: for a test that needs a migrated database besides its worker's,
 * without running the migrations again.
 */
export async function createMigratedDatabase(client: Client, name: string): Promise<void> {
  const template = process.env[TEST_DATABASE_ENV.template];
  if (!template) throw new Error('No migrated template: the jest config must declare the global setup (libs/testing).');
  assertTestDatabaseName(name);
  await createFromTemplate(client, name, template);
}

async function createFromTemplate(client: Client, name: string, template: string): Promise<void> {
  const sql = `CREATE DATABASE ${client.escapeIdentifier(name)} TEMPLATE ${client.escapeIdentifier(template)}`;
  for (let attempt = 1; ; attempt++) {
    try {
      await client.query(sql);
      return;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === '42P04') return; // duplicate_database: another file of this worker made it meanwhile
      // object_in_use: "source database is being accessed by other users", a passing connection
      if (code !== '55006' || attempt >= 20) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}

/**
 * Empties every table except the migrations' bookkeeping (`TRUNCATE … RESTART IDENTITY CASCADE`), and
 * the job queue's jobs.
 * The tables are read from the catalog, so tables added by new migrations are covered as they come.
 * Refuses a database whose name lacks `test`.
 */
export async function resetDatabase(target: string | DataSource): Promise<void> {
  if (typeof target === 'string') {
    assertTestDatabaseUrl(target);
    const client = new Client({ connectionString: target });
    await client.connect();
    try {
      await truncateAll((sql) => client.query(sql).then((result) => result.rows));
    } finally {
      await client.end();
    }
  } else {
    await truncateAll((sql) => target.query(sql));
  }
}

type Query = (sql: string) => Promise<Array<Record<string, unknown>>>;

async function truncateAll(query: Query): Promise<void> {
  const rows = await query(`
    SELECT current_database() AS database,
           (SELECT string_agg(format('%I.%I', schemaname, tablename), ', ' ORDER BY schemaname, tablename)
              FROM pg_catalog.pg_tables
             WHERE schemaname NOT IN ('pg_catalog', 'information_schema')
               AND schemaname NOT LIKE 'pg\\_%'
               AND schemaname <> '${JOB_QUEUE_SCHEMA}'
               AND tablename <> '${MIGRATIONS_TABLE}') AS tables,
           to_regclass('${JOB_QUEUE_SCHEMA}.job') IS NOT NULL AS "hasJobQueue"`);
  const { database, tables, hasJobQueue } = rows[0] as {
    database: string;
    tables: string | null;
    hasJobQueue: boolean;
  };
  assertTestDatabaseName(database);
  if (tables) await query(`TRUNCATE TABLE ${tables} RESTART IDENTITY CASCADE`);
  // The job queue's own bookkeeping (schema version, queues, schedules) stays; its jobs go.
  if (hasJobQueue) await query(`TRUNCATE TABLE ${JOB_QUEUE_SCHEMA}.job, ${JOB_QUEUE_SCHEMA}.archive`);
}
