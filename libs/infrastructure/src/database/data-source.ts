import { DataSource, DataSourceOptions, MigrationExecutor } from 'typeorm';
import { ENTITIES } from '../persistence/entities';
import { MIGRATIONS } from './migrations';

/**
 * The one place that knows how the service talks to PostgreSQL. The schema comes
 * only from the migrations listed in `./migrations` (never `synchronize`).
 */
export function dataSourceOptions(url: string, overrides: Partial<DataSourceOptions> = {}): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    extra: { max: 10, connectionTimeoutMillis: 5000 },
    ...overrides,
  } as DataSourceOptions;
}

export function createDataSource(url: string, overrides: Partial<DataSourceOptions> = {}): DataSource {
  return new DataSource(dataSourceOptions(url, overrides));
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
