import { DataSource, DataSourceOptions, MigrationExecutor } from 'typeorm';
import { translateDriverErrors } from './driver-errors';
import { ENTITIES } from '../persistence/entities';
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
}

export const DEFAULT_POOL_LIMITS: PoolLimits = {
  max: 10,
  acquireTimeoutMs: 5000,
  statementTimeoutMs: 5000,
  idleInTransactionTimeoutMs: 10_000,
  queryTimeoutMs: 6000,
};

/**
 * The one place that knows how the service talks to PostgreSQL. The schema comes
 * only from the migrations listed in `./migrations` (never `synchronize`).
 */
export function dataSourceOptions(
  url: string,
  overrides: Partial<DataSourceOptions> = {},
  limits: PoolLimits = DEFAULT_POOL_LIMITS,
): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    extra: {
      max: limits.max,
      connectionTimeoutMillis: limits.acquireTimeoutMs,
      // Sent in each connection's start-up packet: every pooled session has them.
      statement_timeout: limits.statementTimeoutMs,
      idle_in_transaction_session_timeout: limits.idleInTransactionTimeoutMs,
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
 * Applies every pending migration to the database at `url` (the `db:migrate` command and start-up) and
 * returns their names. It holds a session-level advisory lock meanwhile, on the one connection that runs the
 * migrations: of N instances starting together, one migrates while the others wait for the lock, then find
 * nothing pending. The lock goes with the session, so a killed migrator never leaves it held.
 */
export async function migrateDatabase(url: string): Promise<string[]> {
  const dataSource = createDataSource(url, { extra: { max: 1 } });
  await dataSource.initialize();
  const queryRunner = dataSource.createQueryRunner();
  try {
    await queryRunner.connect();
    await queryRunner.query('SELECT pg_advisory_lock(hashtext($1))', [MIGRATION_LOCK]);
    try {
      const executor = new MigrationExecutor(dataSource, queryRunner);
      executor.transaction = 'each';
      const applied = await executor.executePendingMigrations();
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
