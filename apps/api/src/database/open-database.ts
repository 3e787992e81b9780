import { resolve } from 'node:path';
import type { LoggerService } from '@nestjs/common';
import { startEmbeddedPostgres } from '@petstore/embedded-postgres';
import { migrateDatabase, MigrationLogEntry } from '@petstore/infrastructure';
import { AppConfig } from '../config/app-config';
import { RELEASE } from '../release/release';
import { poolLimits } from './database.module';

export interface OpenDatabase {
  /** Where the pool connects (DATABASE_URL: PostgreSQL, or a transaction pooler in front of it). */
  url: string;
  /** A direct session (DATABASE_DIRECT_URL, else `url`): migrations, the LISTEN listener, the start-up lock. */
  directUrl: string;
  /** Stops the embedded PostgreSQL, if this process started one. */
  stop(): Promise<void>;
}

/**
 * DATABASE_URL when set; else an embedded PostgreSQL whose data lives in
 * `<DATA_DIR>/postgres` and survives restarts. Then the pending migrations run, on the direct connection.
 */
export async function openDatabase(config: AppConfig, logger: LoggerService): Promise<OpenDatabase> {
  const url = config.database.url ?? '';
  let database: OpenDatabase = { url, directUrl: config.database.directUrl ?? url, stop: async () => undefined };
  if (!config.database.url) {
    const dataDir = resolve(config.database.dataDir, 'postgres');
    logger.log(`DATABASE_URL is not set: starting an embedded PostgreSQL with its data in ${dataDir}`, 'Database');
    const embedded = await startEmbeddedPostgres({
      dataDir,
      log: (line) => logger.debug?.(line, 'EmbeddedPostgres'),
    });
    database = { ...embedded, directUrl: embedded.url };
  }
  try {
    const limits = poolLimits(config);
    const applied = await migrateDatabase(database.directUrl, {
      ...(limits.viaPooler ? { roleBounds: limits } : {}),
      release: RELEASE.version,
      settings: {
        lockTimeoutMs: config.database.migrationLockTimeoutMs,
        statementTimeoutMs: config.database.migrationStatementTimeoutMs,
        attempts: config.database.migrationAttempts,
      },
      log: (entry) => logMigration(logger, entry),
    }).catch((error: unknown) => {
      throw explainPoolerRefusal(error);
    });
    logger.log(applied.length ? `Applied migrations: ${applied.join(', ')}` : 'Schema is up to date', 'Database');
  } catch (error) {
    await database.stop();
    throw error;
  }
  return database;
}

/** The migrator's lines, as the service's JSON lines (its fields beside `msg`). */
function logMigration(logger: LoggerService, { level, ...fields }: MigrationLogEntry): void {
  if (level === 'warn') logger.warn(fields, 'Migrations');
  else if (level === 'info') logger.log(fields, 'Migrations');
  else logger.debug?.(fields, 'Migrations');
}

/**
 * A transaction-mode pooler refuses the session's start-up parameters (`unsupported startup parameter`): that
 * is DATABASE_URL pointing at a pooler without DATABASE_DIRECT_URL, and the fix is a setting, not a retry.
 */
export function explainPoolerRefusal(error: unknown): unknown {
  const message = error instanceof Error ? error.message : String(error);
  if (!/unsupported startup parameter/i.test(message)) return error;
  return new Error(
    `${message}: DATABASE_URL looks like a transaction-mode connection pooler. Set DATABASE_DIRECT_URL to a direct ` +
      'connection to PostgreSQL (migrations, LISTEN and locks need a session); see docs/operations.md.',
  );
}
