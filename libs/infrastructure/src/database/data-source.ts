import { DataSource, DataSourceOptions } from 'typeorm';
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

/** Applies every pending migration to the database at `url` (the `db:migrate` command and start-up). */
export async function migrateDatabase(url: string): Promise<string[]> {
  const dataSource = createDataSource(url, { extra: { max: 1 } });
  await dataSource.initialize();
  try {
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((m) => m.name);
  } finally {
    await dataSource.destroy();
  }
}
