import { Logger as TypeOrmLogger, MigrationExecutor, MigrationInterface, QueryRunner } from 'typeorm';
import {
  createDataSource,
  DEFAULT_POOL_LIMITS,
  MIGRATION_LOCK,
  PoolLimits,
  poolBoundsHold,
  waitForAdvisoryLock,
} from './data-source';
import { MIGRATIONS } from './migrations';

/**
 * How migrations behave on a live database (docs/development.md, "Migrations without downtime"): a statement
 * that cannot get its lock within `lockTimeoutMs` gives up (rather than queue every request of the service
 * behind it), the migration is rolled back and tried again after a jittered pause, up to `attempts` times.
 */
export interface MigrationSettings {
  /** `lock_timeout` of each migration statement: how long it may wait for a lock (and so hold up others). */
  lockTimeoutMs: number;
  /** `statement_timeout` of each migration statement: not the service's, which is for requests. */
  statementTimeoutMs: number;
  /** Tries of a migration that met a lock timeout or a deadlock, the first included. */
  attempts: number;
  /** The first pause between tries; each next one doubles, all with full jitter. */
  retryBaseMs: number;
}

export const DEFAULT_MIGRATION_SETTINGS: MigrationSettings = {
  lockTimeoutMs: 3000,
  statementTimeoutMs: 3_600_000,
  attempts: 5,
  retryBaseMs: 500,
};

/** A structured line for the caller's logger (JSON at the service). */
export interface MigrationLogEntry {
  level: 'info' | 'warn' | 'debug';
  msg: string;
  migration?: string;
  statement?: string;
  sqlstate?: string;
  attempt?: number;
  retryInMs?: number;
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
  settings?: Partial<MigrationSettings>;
  /**
   * The version of the release that migrates (semver). A database holding migrations this release does not
   * know is refused unless the release that applied them marked them as served by this version or older.
   * Without it, any unknown migration is refused.
   */
  release?: string;
  log?: (entry: MigrationLogEntry) => void;
  /** The migrations to apply (tests); MIGRATIONS by default. */
  migrations?: MigrationClass[];
}

type MigrationClass = new () => MigrationInterface;

/**
 * What a migration may declare besides `up`/`down` (docs/development.md):
 * - `servesFrom`: the oldest release that runs correctly on the schema after it (an expand step: the release
 *   before it). Recorded in `schema_migration_releases`, so that release may start on the migrated database.
 * - `precheck`: problems that would make it fail (colliding data): run for every pending migration before any
 *   of them commits, so a release whose migrations cannot all apply changes nothing. It sees the schema before
 *   every pending migration: a table that an earlier pending one creates may not exist yet.
 */
export interface ReleaseAwareMigration extends MigrationInterface {
  servesFrom?: string;
  precheck?(queryRunner: QueryRunner): Promise<string[]>;
}

/** The database holds migrations this release does not know and may not serve: a newer release migrated it. */
export class NewerSchemaError extends Error {
  constructor(
    readonly unknown: string[],
    release: string,
  ) {
    super(
      `The database was migrated by a newer release: ${unknown.join(', ')} ` +
        `${unknown.length === 1 ? 'is a migration' : 'are migrations'} this release (${release}) does not know ` +
        'and may not serve. Run the newer release, or see docs/operations.md, "Rolling back".',
    );
    this.name = 'NewerSchemaError';
  }
}

/** A pending migration's precheck found data it cannot migrate: nothing was changed. */
export class MigrationPrecheckError extends Error {
  constructor(readonly problems: Array<{ migration: string; problem: string }>) {
    super(
      'Migrations not started, nothing was changed: ' +
        problems.map(({ migration, problem }) => `${migration}: ${problem}`).join('; '),
    );
    this.name = 'MigrationPrecheckError';
  }
}

/** A migration failed: which ones committed before it (each migration commits on its own) and which did not run. */
export class MigrationFailedError extends Error {
  constructor(
    readonly failed: string,
    readonly committed: string[],
    readonly notRun: string[],
    options: { cause: unknown },
  ) {
    const cause = options.cause instanceof Error ? options.cause.message : String(options.cause);
    super(
      `Migration ${failed} failed and was rolled back: ${cause}. ` +
        (committed.length ? `Committed before it in this run: ${committed.join(', ')}. ` : 'Nothing committed. ') +
        (notRun.length ? `Not run: ${notRun.join(', ')}.` : ''),
      options,
    );
    this.name = 'MigrationFailedError';
  }
}

/**
 * Applies every pending migration to the database at `url` (the `db:migrate` command and start-up) and returns
 * their names. It holds a session-level advisory lock meanwhile, on the one connection that runs the migrations:
 * of N instances starting together, one migrates while the others wait for the lock (without a time limit), then
 * find nothing pending. The lock goes with the session, so a killed migrator never leaves it held.
 *
 * Before anything runs: a database migrated by a newer release is refused (NewerSchemaError), and every pending
 * migration's precheck runs (MigrationPrecheckError, nothing changed). Then each migration in its transaction
 * (unless it declares `transaction = false`) under the migration settings' lock and statement timeouts; one that
 * meets a lock timeout or a deadlock is rolled back and tried again (see MigrationSettings).
 */
export async function migrateDatabase(url: string, options: MigrateOptions = {}): Promise<string[]> {
  const settings = { ...DEFAULT_MIGRATION_SETTINGS, ...options.settings };
  const log = options.log ?? (() => undefined);
  const limits: PoolLimits = {
    ...DEFAULT_POOL_LIMITS,
    max: 1,
    statementTimeoutMs: settings.statementTimeoutMs,
    // pg's client-side bound must outlast the server's, or a long backfill is cut off by the driver.
    queryTimeoutMs: settings.statementTimeoutMs + 10_000,
  };
  const migrations = options.migrations ?? MIGRATIONS;
  const dataSource = createDataSource(url, { logger: typeOrmLogger(log), migrations }, limits);
  await dataSource.initialize();
  const queryRunner = dataSource.createQueryRunner();
  try {
    await queryRunner.connect();
    // A session lock through a transaction pooler would stay on whichever server session took it, held for
    // good: a pooler that accepted the start-up parameters only to drop them is found here, before the lock.
    const dropped = await poolBoundsHold(queryRunner, limits);
    if (dropped) {
      throw new Error(
        `The migration connection is not a direct session (${dropped}): a connection pooler ignoring start-up ` +
          'parameters? Migrations need a direct connection (DATABASE_DIRECT_URL).',
      );
    }
    // Waiting for another instance's migrations is not a failure: no time limit (see waitForAdvisoryLock).
    await waitForAdvisoryLock(async () => {
      const rows = (await queryRunner.query('SELECT pg_try_advisory_lock(hashtext($1)) AS got', [
        MIGRATION_LOCK,
      ])) as Array<{ got: boolean }>;
      return rows[0]?.got === true;
    });
    try {
      await queryRunner.query(`SET statement_timeout = ${Math.trunc(settings.statementTimeoutMs)}`);
      await queryRunner.query(`SET lock_timeout = ${Math.trunc(settings.lockTimeoutMs)}`);
      const executor = new MigrationExecutor(dataSource, queryRunner);
      executor.transaction = 'each';
      await refuseNewerSchema(queryRunner, executor, migrations, options.release ?? '0.0.0');
      const pending = await executor.getPendingMigrations();
      await precheck(
        queryRunner,
        pending.map((migration) => migration.instance as ReleaseAwareMigration),
      );
      const applied = await applyWithRetries(
        executor,
        pending.map((m) => m.name),
        settings,
        log,
      );
      await recordReleases(queryRunner, migrations, options.release);
      if (options.roleBounds) await applyRoleBounds(queryRunner, options.roleBounds);
      return applied;
    } finally {
      // (should the session be gone, so is its lock: the original error matters more)
      await queryRunner.query('SELECT pg_advisory_unlock(hashtext($1))', [MIGRATION_LOCK]).catch(() => undefined);
    }
  } finally {
    await queryRunner.release();
    await dataSource.destroy();
  }
}

/** Lock timeout and deadlock: another transaction was in the way, and a later try may find it gone. */
const RETRYABLE = new Set(['55P03', '40P01']);

async function applyWithRetries(
  executor: MigrationExecutor,
  pending: string[],
  settings: MigrationSettings,
  log: (entry: MigrationLogEntry) => void,
): Promise<string[]> {
  const committed: string[] = [];
  for (let attempt = 1; ; attempt++) {
    try {
      const applied = await executor.executePendingMigrations();
      committed.push(...applied.map((migration) => migration.name));
      return committed;
    } catch (error) {
      // The executor stops at the first failure: those before it committed, it rolled back.
      const done = new Set((await executor.getExecutedMigrations()).map((migration) => migration.name));
      committed.push(...pending.filter((name) => done.has(name) && !committed.includes(name)));
      const notDone = pending.filter((name) => !done.has(name));
      const failed = notDone[0] ?? 'unknown';
      const sqlstate = sqlstateOf(error);
      const statement = statementOf(error);
      if (!sqlstate || !RETRYABLE.has(sqlstate) || attempt >= settings.attempts) {
        throw new MigrationFailedError(failed, committed, notDone.slice(1), { cause: error });
      }
      const retryInMs = Math.round(Math.random() * settings.retryBaseMs * 2 ** (attempt - 1));
      log({
        level: 'warn',
        msg:
          `Migration ${failed} ${sqlstate === '40P01' ? 'met a deadlock' : 'waited too long for a lock'} ` +
          `(attempt ${attempt} of ${settings.attempts}): rolled back, trying again`,
        migration: failed,
        statement,
        sqlstate,
        attempt,
        retryInMs,
      });
      await new Promise((resolve) => setTimeout(resolve, retryInMs));
    }
  }
}

async function refuseNewerSchema(
  queryRunner: QueryRunner,
  executor: MigrationExecutor,
  migrations: MigrationClass[],
  release: string,
): Promise<void> {
  const known = new Set(migrations.map((migration) => new migration().name ?? migration.name));
  const executed = await executor.getExecutedMigrations().catch(() => []);
  const unknown = executed.map((migration) => migration.name).filter((name) => !known.has(name));
  if (!unknown.length) return;
  const servedFrom = new Map<string, string>();
  if (await tableExists(queryRunner, 'schema_migration_releases')) {
    const rows = (await queryRunner.query(
      'SELECT name, serves_from FROM schema_migration_releases WHERE name = ANY($1::text[])',
      [unknown],
    )) as Array<{ name: string; serves_from: string }>;
    for (const row of rows) servedFrom.set(row.name, row.serves_from);
  }
  const refused = unknown.filter((name) => {
    const from = servedFrom.get(name);
    return from === undefined || compareVersions(from, release) > 0;
  });
  if (refused.length) throw new NewerSchemaError(refused, release);
}

async function precheck(queryRunner: QueryRunner, pending: ReleaseAwareMigration[]): Promise<void> {
  const problems: Array<{ migration: string; problem: string }> = [];
  for (const migration of pending) {
    if (!migration.precheck) continue;
    for (const problem of await migration.precheck(queryRunner)) {
      problems.push({ migration: migration.name ?? migration.constructor.name, problem });
    }
  }
  if (problems.length) throw new MigrationPrecheckError(problems);
}

/**
 * Which release each known migration may be served by (`servesFrom`, else this release), for an older release
 * started on this database later (refuseNewerSchema). A row once written stays: a migration's is fixed.
 */
async function recordReleases(
  queryRunner: QueryRunner,
  migrations: MigrationClass[],
  release: string | undefined,
): Promise<void> {
  if (!(await tableExists(queryRunner, 'schema_migration_releases'))) return;
  const rows = migrations
    .map((migration) => new migration() as ReleaseAwareMigration)
    .map((migration) => ({ name: migration.name ?? '', servesFrom: migration.servesFrom ?? release }))
    .filter((row): row is { name: string; servesFrom: string } => !!row.name && !!row.servesFrom);
  if (!rows.length) return;
  await queryRunner.query(
    `INSERT INTO schema_migration_releases (name, serves_from)
       SELECT name, serves_from FROM unnest($1::text[], $2::text[]) AS listed (name, serves_from)
       ON CONFLICT (name) DO NOTHING`,
    [rows.map((row) => row.name), rows.map((row) => row.servesFrom)],
  );
}

async function tableExists(queryRunner: QueryRunner, table: string): Promise<boolean> {
  const rows = (await queryRunner.query('SELECT to_regclass($1) IS NOT NULL AS found', [table])) as Array<{
    found: boolean;
  }>;
  return rows[0]?.found === true;
}

/** Semantic versions compared by their numbers (`1.10.0` > `1.9.2`); pre-release tags are ignored. */
export function compareVersions(a: string, b: string): number {
  const parts = (version: string) => {
    const end = [version.indexOf('-'), version.indexOf('+')].filter((at) => at >= 0);
    return version
      .slice(0, end.length ? Math.min(...end) : undefined)
      .split('.')
      .map((part) => Number(part) || 0);
  };
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const difference = (x[i] ?? 0) - (y[i] ?? 0);
    if (difference) return Math.sign(difference);
  }
  return 0;
}

/** The SQLSTATE of a driver error, wherever translation wrapped it (`cause`, TypeORM's `driverError`). */
function sqlstateOf(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    const fields = current as { code?: unknown; driverError?: { code?: unknown }; cause?: unknown };
    if (typeof fields.code === 'string' && isSqlstate(fields.code)) return fields.code;
    if (typeof fields.driverError?.code === 'string') return fields.driverError.code;
    current = fields.cause;
  }
  return undefined;
}

/** Five digits or capital letters: a SQLSTATE (pg's network errors carry Node's codes, ECONNREFUSED and the like). */
function isSqlstate(code: string): boolean {
  if (code.length !== 5) return false;
  for (const c of code) if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z'))) return false;
  return true;
}

/** `text` on one line: each run of whitespace one space, trimmed, at most `max` characters. */
function oneLine(text: string, max: number): string {
  let line = '';
  let space = false;
  for (const c of text) {
    if (c === ' ' || c === '\n' || c === '\t' || c === '\r') {
      space = line.length > 0;
      continue;
    }
    if (space) line += ' ';
    space = false;
    line += c;
    if (line.length >= max) break;
  }
  return line.slice(0, max);
}

/** The statement that failed (TypeORM's QueryFailedError carries it), cut to a log line's length. */
function statementOf(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    const query = (current as { query?: unknown }).query;
    if (typeof query === 'string') return oneLine(query, 300);
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * TypeORM's own lines, as structured entries: its progress at debug, nothing of its failures (the migrator
 * reports those itself, once, with what committed). Without this, TypeORM prints plain text to the console.
 */
function typeOrmLogger(log: (entry: MigrationLogEntry) => void): TypeOrmLogger {
  return {
    logQuery: () => undefined,
    logQueryError: () => undefined,
    logQuerySlow: () => undefined,
    logSchemaBuild: (message: string) => log({ level: 'debug', msg: message }),
    logMigration: (message: string) => {
      if (!message.toLowerCase().includes('failed')) log({ level: 'debug', msg: message });
    },
    log: () => undefined,
  };
}

const ROLE_BOUNDS = ['statement_timeout', 'idle_in_transaction_session_timeout'] as const;

/** The role's defaults in this database (see MigrateOptions.roleBounds); unchanged when they already match. */
async function applyRoleBounds(queryRunner: QueryRunner, limits: PoolLimits) {
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
