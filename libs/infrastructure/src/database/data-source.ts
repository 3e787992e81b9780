import { Client, PoolConfig } from 'pg';
import { DataSource, DataSourceOptions } from 'typeorm';
import { translateDriverErrors } from './driver-errors';
import { MIGRATIONS } from './migrations';

/** Bounds on every pooled connection, so that a slow or unreachable database costs seconds, not a hung request. */
export interface PoolLimits {
  /** Connections in the pool. */
  max: number;
  /** Waiting for a pooled connection, or for a new one to open (pg-pool `connectionTimeoutMillis`). */
  acquireTimeoutMs: number;
  /** Server side: a statement running longer is cancelled (`statement_timeout`). */
  statementTimeoutMs: number;
  /** Server side: a session idle inside a transaction this long is ended (`idle_in_transaction_session_timeout`). */
  idleInTransactionTimeoutMs: number;
  /** Client side: a statement unanswered this long fails and its connection is dropped (pg `query_timeout`). */
  queryTimeoutMs: number;
  /**
   * Whether a transaction-mode connection pooler (PgBouncer, Supavisor, RDS Proxy…) stands between the pool and
   * PostgreSQL. A pooler refuses start-up parameters and hands each transaction to any server session, so the
   * two server-side bounds cannot ride the connection: they are then the role's defaults in this database
   * (`applyRoleBounds`, at start-up, for every session the pooler opens) and each transaction's `SET LOCAL`
   * (`transactionBoundsSql`, for sessions it opened before).
   */
  viaPooler?: boolean;
}

export const DEFAULT_POOL_LIMITS: PoolLimits = {
  max: 10,
  acquireTimeoutMs: 5000,
  statementTimeoutMs: 5000,
  idleInTransactionTimeoutMs: 10_000,
  queryTimeoutMs: 6000,
};

/**
 * The settings of every pooled connection (node-postgres's pool and client config, without the URL): the service's
 * own pool (DatabasePool) and the migrations' data source are opened with them.
 */
export function poolSettings(limits: PoolLimits = DEFAULT_POOL_LIMITS): PoolConfig {
  return {
    max: limits.max,
    // pg's pipeline mode (public: `pipeline` of pg's client config): a query is sent without waiting for the answer
    // to the one before. The repositories still wait for each answer; TransactionHost sends a transaction's BEGIN
    // and its held writes together with the statement or COMMIT that follows them, one round trip for all.
    pipeline: true,
    connectionTimeoutMillis: limits.acquireTimeoutMs,
    // Direct: sent in each connection's start-up packet, so every pooled session has them. Through a
    // pooler, which refuses them: the role's defaults and each transaction's SET LOCAL (see PoolLimits).
    ...(limits.viaPooler
      ? {}
      : {
          statement_timeout: limits.statementTimeoutMs,
          idle_in_transaction_session_timeout: limits.idleInTransactionTimeoutMs,
        }),
    query_timeout: limits.queryTimeoutMs,
    // TCP keep-alive: a peer gone without a word (a partition) is noticed on idle connections too.
    keepAlive: true,
  };
}

/**
 * TypeORM's options, for the migrations (migrator.ts), the one role TypeORM has: the service's statements and
 * transactions run on its own pool (DatabasePool, TransactionHost). The schema comes only from the migrations listed
 * in `./migrations` (never `synchronize`); there are no entities.
 */
export function dataSourceOptions(
  url: string,
  overrides: Partial<DataSourceOptions> = {},
  limits: PoolLimits = DEFAULT_POOL_LIMITS,
): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    extra: poolSettings(limits),
    ...overrides,
  } as DataSourceOptions;
}

/** A data source whose errors are the application's persistence errors (see driver-errors.ts). */
export function createDataSource(
  url: string,
  overrides: Partial<DataSourceOptions> = {},
  limits: PoolLimits = DEFAULT_POOL_LIMITS,
): DataSource {
  return translateDriverErrors(new DataSource(dataSourceOptions(url, overrides, limits)));
}

/** Names the PostgreSQL advisory lock that migrations run under (`pg_advisory_lock(hashtext(…))`). */
export const MIGRATION_LOCK = 'petstore:migrations';

/**
 * The statement a transaction starts with behind a pooler: both bounds for this transaction only (`SET LOCAL`,
 * which a transaction-mode pooler keeps on the one server session the transaction runs on). Integers from the
 * validated configuration, so one simple-protocol round trip can carry both.
 */
export function transactionBoundsSql(limits: PoolLimits): string {
  const whole = (ms: number) => String(Math.trunc(ms));
  return (
    `SET LOCAL statement_timeout = ${whole(limits.statementTimeoutMs)}; ` +
    `SET LOCAL idle_in_transaction_session_timeout = ${whole(limits.idleInTransactionTimeoutMs)}`
  );
}

/**
 * Runs `work` while holding the start-up lock (the migrations' advisory lock) on a session of its own at `url`,
 * a direct connection: instances starting together take turns (pg-boss creating its schema and queues, say,
 * which deadlock when run by several at once). The lock goes with the session, so a killed holder never keeps it.
 */
export async function withStartupLock<T>(url: string, work: () => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url, application_name: 'petstore-startup-lock' });
  // A connection lost while waiting or working fails the query in progress; this keeps it from being uncaught.
  client.on('error', () => undefined);
  await client.connect();
  try {
    await waitForAdvisoryLock(async () => {
      const { rows } = await client.query<{ got: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS got', [
        MIGRATION_LOCK,
      ]);
      return rows[0]?.got === true;
    });
    return await work();
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', [MIGRATION_LOCK]).catch(() => undefined);
    await client.end().catch(() => undefined);
  }
}

/**
 * Whether the pool's sessions have the server-side bounds (PostgreSQL's own value, in milliseconds). A pooler
 * told to ignore the start-up parameters drops them silently: start-up checks and refuses to run unbounded.
 */
export async function poolBoundsHold(
  session: { query(sql: string): Promise<unknown> },
  limits: PoolLimits,
): Promise<string | null> {
  const rows = (await session.query(
    `SELECT name, setting FROM pg_settings WHERE name IN ('statement_timeout', 'idle_in_transaction_session_timeout')`,
  )) as { name: string; setting: string }[];
  const wanted: Record<string, number> = {
    statement_timeout: Math.trunc(limits.statementTimeoutMs),
    idle_in_transaction_session_timeout: Math.trunc(limits.idleInTransactionTimeoutMs),
  };
  const wrong = rows.filter((row) => Number(row.setting) !== wanted[row.name]);
  return wrong.length
    ? wrong.map((row) => `${row.name} is ${row.setting} ms, not ${wanted[row.name]}`).join('; ')
    : null;
}

/**
 * Waits, without a time limit, until `tryLock` (a `pg_try_advisory_lock`) gets the lock, trying again every
 * ~250 ms. Not `pg_advisory_lock`: a session blocked in it sits in an open transaction, and `CREATE INDEX
 * CONCURRENTLY` (an online migration that the lock's holder runs) waits for every open transaction to end, so the
 * holder and the waiter would deadlock and PostgreSQL would abort one of them. Between tries this session is idle.
 */
export async function waitForAdvisoryLock(tryLock: () => Promise<boolean>, pollMs = 250): Promise<void> {
  while (!(await tryLock())) {
    await new Promise((resolve) => setTimeout(resolve, pollMs * (0.5 + Math.random())));
  }
}
