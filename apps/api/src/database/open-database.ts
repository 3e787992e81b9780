import { resolve } from 'node:path';
import type { LoggerService } from '@nestjs/common';
import { startEmbeddedPostgres } from '@petstore/embedded-postgres';
import { migrateDatabase } from '@petstore/infrastructure';
import { AppConfig } from '../config/app-config';

export interface OpenDatabase {
  url: string;
  /** Stops the embedded PostgreSQL, if this process started one. */
  stop(): Promise<void>;
}

/**
 * DATABASE_URL when set; else an embedded PostgreSQL whose data lives in
 * `<DATA_DIR>/postgres` and survives restarts. Then the pending migrations run.
 */
export async function openDatabase(config: AppConfig, logger: LoggerService): Promise<OpenDatabase> {
  let database: OpenDatabase = { url: config.database.url ?? '', stop: async () => undefined };
  if (!config.database.url) {
    const dataDir = resolve(config.database.dataDir, 'postgres');
    logger.log(`DATABASE_URL is not set: starting an embedded PostgreSQL with its data in ${dataDir}`, 'Database');
    database = await startEmbeddedPostgres({ dataDir, log: (line) => logger.debug?.(line, 'EmbeddedPostgres') });
  }
  try {
    const applied = await migrateDatabase(database.url);
    logger.log(applied.length ? `Applied migrations: ${applied.join(', ')}` : 'Schema is up to date', 'Database');
  } catch (error) {
    await database.stop();
    throw error;
  }
  return database;
}
