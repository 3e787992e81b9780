import { Client } from 'pg';
import { DataSource, DataSourceOptions, MigrationExecutor } from 'typeorm';
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
 * The one place that knows how the service talks to PostgreSQL. TypeORM's roles are the data source (the pool),
 * transactions (UnitOfWork) and migrations; the repositories run fixed SQL through TransactionHost, so there are no
 * entities. The schema comes only from the migrations listed in `./migrations` (never `synchronize`).
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
    extra: {
      max: limits.max,
      // pg's pipeline mode: a query is sent without waiting for the answer to the one before. TypeORM and the
      // repositories still wait for each answer; TransactionHost sends a transaction's BEGIN and its held writes
      // together with the statement or COMMIT that follows them, one round trip for all.
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
    },
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

/** What `migrateDatabase` does besides the migrations. */
export interface MigrateOptions {
  /**
   * Behind a pooler: make the bounds the defaults of the service's role in this database (`ALTER ROLE
   * CURRENT_USER IN DATABASE … SET`, which any role may do for itself), so every server session the pooler
   * opens has them, statements outside a transaction (reads) included. Done under the migration lock, and only
   * when they differ, so instances starting together do not update the role at once.
   */
  roleBounds?: PoolLimits;
}

/**
 * Applies every pending migration to the database at `url` (the `db:migrate` command and start-up) and
 * returns their names. It holds a session-level advisory lock meanwhile, on the one connection that runs the
 * migrations: of N instances starting together, one migrates while the others wait for the lock, then find
 * nothing pending. The lock goes with the session, so a killed migrator never leaves it held.
 */
export async function migrateDatabase(url: string, options: MigrateOptions = {}): Promise<string[]> {
  const dataSource = createDataSource(url, {}, { ...DEFAULT_POOL_LIMITS, max: 1 });
  await dataSource.initialize();
  const queryRunner = dataSource.createQueryRunner();
  try {
    await queryRunner.connect();
    // A session lock through a transaction pooler would stay on whichever server session took it, held for
    // good: a pooler that accepted the start-up parameters only to drop them is found here, before the lock.
    const dropped = await poolBoundsHold(queryRunner, DEFAULT_POOL_LIMITS);
    if (dropped) {
      throw new Error(
        `The migration connection is not a direct session (${dropped}): a connection pooler ignoring start-up ` +
          'parameters? Migrations need a direct connection (DATABASE_DIRECT_URL).',
      );
    }
    await queryRunner.query('SELECT pg_advisory_lock(hashtext($1))', [MIGRATION_LOCK]);
    try {
      const executor = new MigrationExecutor(dataSource, queryRunner);
      executor.transaction = 'each';
      const applied = await executor.executePendingMigrations();
      if (options.roleBounds) await applyRoleBounds(queryRunner, options.roleBounds);
      return applied.map((m) => m.name);
    } finally {
      // (should the session be gone, so is its lock: the original error matters more)
      await queryRunner.query('SELECT pg_advisory_unlock(hashtext($1))', [MIGRATION_LOCK]).catch(() => undefined);
    }
  } finally {
    await queryRunner.release();
    await dataSource.destroy();
  }
}

const ROLE_BOUNDS = ['statement_timeout', 'idle_in_transaction_session_timeout'] as const;

/** The role's defaults in this database (see MigrateOptions.roleBounds); unchanged when they already match. */
async function applyRoleBounds(
  queryRunner: { query(sql: string, params?: unknown[]): Promise<unknown> },
  limits: PoolLimits,
) {
  const wanted: Record<(typeof ROLE_BOUNDS)[number], number> = {
    statement_timeout: Math.trunc(limits.statementTimeoutMs),
    idle_in_transaction_session_timeout: Math.trunc(limits.idleInTransactionTimeoutMs),
  };
  const rows = (await queryRunner.query(
    `SELECT unnest(setconfig) AS setting FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase
      WHERE s.setrole = (SELECT oid FROM pg_roles WHERE rolname = current_user) AND d.datname = current_database()`,
  )) as { setting: string }[];
  const current = new Map(rows.map(({ setting }) => setting.split('=') as [string, string]));
  for (const name of ROLE_BOUNDS) {
    if (current.get(name) === String(wanted[name])) continue;
    // Identifiers cannot be parameters; the database name is quoted by PostgreSQL itself (format %I).
    await queryRunner.query(
      `DO $$ BEGIN EXECUTE format('ALTER ROLE CURRENT_USER IN DATABASE %I SET ${name} = ${wanted[name]}', ` +
        `current_database()); END $$`,
    );
  }
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
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [MIGRATION_LOCK]);
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
