import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { isProcessAlive, reclaimEmbeddedPostgresDir, startEmbeddedPostgres } from '@petstore/embedded-postgres';
import { Client } from 'pg';
import {
  TEST_DATABASE_ENV,
  TEST_DATABASE_PREFIX,
  assertTestDatabaseUrl,
  databaseNameOf,
  withDatabaseName,
} from './test-database';

/**
 * The server behind a test run, chosen once per jest process (docs/architecture.md, Tests):
 * 1. `TEST_DATABASE_URL` when set (a shared server: only the databases this run creates are dropped);
 * 2. else a PostgreSQL container through testcontainers, when a container runtime answers;
 * 3. else an embedded PostgreSQL in a fresh temporary directory.
 * Then one template database is created and migrated; workers copy it (see `testDatabaseUrl`).
 * The migrations are the caller's (the jest global setup in tools/jest passes the infrastructure's):
 * this lib does not import the infrastructure, whose specs import this lib.
 */

export interface AcquireOptions {
  /** Applies the schema's migrations to the database at `url`. */
  migrate(url: string): Promise<unknown>;
  log?: (line: string) => void;
}

/** How long a container runtime may take to answer before we move on. */
const RUNTIME_PROBE_MS = 5_000;
/** Pulling the image and starting the container; past this we move on (and stop it if it comes up late). */
const CONTAINER_START_MS = 60_000;
const CONTAINER_IMAGE = 'postgres:17-alpine';
const SERVER_DATABASE = `${TEST_DATABASE_PREFIX}server`;
const EMBEDDED_DIR_PREFIX = 'petstore-test-pg-';

interface Server {
  kind: 'TEST_DATABASE_URL' | 'testcontainers' | 'embedded';
  /** A database on it whose name contains `test`, for CREATE/DROP DATABASE. */
  url: string;
  /** Whatever else must go: the container, the embedded server and its directory. */
  release(): Promise<void>;
}

interface ProcessState {
  /** Global setups that ran minus global teardowns that ran. */
  users: number;
  provisioning?: Promise<() => Promise<void>>;
}

/**
 * Kept on the jest process's global object: when several jest projects declare this global setup
 * and run in one process, their setups (and teardowns) may each load a fresh copy of this module.
 */
const STATE_KEY = Symbol.for('@petstore/testing:test-database-server');

function processState(): ProcessState {
  const holder = globalThis as unknown as Record<symbol, ProcessState | undefined>;
  return (holder[STATE_KEY] ??= { users: 0 });
}

/** Provisions on the first call in this process; later calls wait for the same server. */
export async function acquireTestDatabaseServer({ migrate, log = defaultLog }: AcquireOptions): Promise<void> {
  const state = processState();
  state.users++;
  state.provisioning ??= provision(migrate, log);
  try {
    await state.provisioning;
  } catch (error) {
    state.provisioning = undefined;
    state.users = 0;
    throw error;
  }
}

/** The last release drops what the run created and stops what it started. */
export async function releaseTestDatabaseServer(): Promise<void> {
  const state = processState();
  if (state.users === 0 || --state.users > 0) return;
  const provisioning = state.provisioning;
  state.provisioning = undefined;
  if (!provisioning) return;
  const dispose = await provisioning.catch(() => undefined);
  await dispose?.();
}

async function provision(
  migrate: AcquireOptions['migrate'],
  log: (line: string) => void,
): Promise<() => Promise<void>> {
  const runId = `${process.pid}_${randomBytes(4).toString('hex')}`;
  const template = `${TEST_DATABASE_PREFIX}tpl_${runId}`;
  const server = await chooseServer(log);
  try {
    assertTestDatabaseUrl(server.url, server.kind);
    const templateUrl = withDatabaseName(server.url, template);
    await admin(server.url, async (client) => {
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(template)}`);
    });
    const started = Date.now();
    await migrate(templateUrl);
    log(`migrated template ${template} (${Date.now() - started} ms)`);
  } catch (error) {
    await dropRunDatabases(server, runId).catch(() => undefined);
    await server.release().catch(() => undefined);
    throw error;
  }
  process.env[TEST_DATABASE_ENV.serverUrl] = server.url;
  process.env[TEST_DATABASE_ENV.template] = template;
  process.env[TEST_DATABASE_ENV.runId] = runId;
  return async () => {
    delete process.env[TEST_DATABASE_ENV.serverUrl];
    delete process.env[TEST_DATABASE_ENV.template];
    delete process.env[TEST_DATABASE_ENV.runId];
    try {
      await dropRunDatabases(server, runId);
    } finally {
      await server.release();
    }
  };
}

async function chooseServer(log: (line: string) => void): Promise<Server> {
  const configured = process.env['TEST_DATABASE_URL'];
  if (configured) {
    assertTestDatabaseUrl(configured, 'TEST_DATABASE_URL');
    log(`using TEST_DATABASE_URL (database "${databaseNameOf(configured)}")`);
    return { kind: 'TEST_DATABASE_URL', url: configured, release: async () => undefined };
  }
  return (await startContainer(log)) ?? (await startEmbedded(log));
}

async function startContainer(log: (line: string) => void): Promise<Server | undefined> {
  const started = Date.now();
  try {
    await probeContainerRuntime();
    const { getContainerRuntimeClient } = await import('testcontainers');
    await withTimeout(getContainerRuntimeClient(), RUNTIME_PROBE_MS, 'the container runtime stopped answering');
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const starting = new PostgreSqlContainer(CONTAINER_IMAGE)
      .withDatabase(SERVER_DATABASE)
      .withUsername('postgres')
      .withPassword('postgres')
      .start();
    const container = await withTimeout(starting, CONTAINER_START_MS, `${CONTAINER_IMAGE} did not start`, () =>
      starting.then((late) => late.stop()).catch(() => undefined),
    );
    log(`using a testcontainers PostgreSQL (${CONTAINER_IMAGE}, ${Date.now() - started} ms)`);
    return {
      kind: 'testcontainers',
      url: container.getConnectionUri(),
      release: async () => {
        await container.stop();
      },
    };
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    log(`testcontainers unavailable after ${Date.now() - started} ms (${reason}); using an embedded PostgreSQL`);
    return undefined;
  }
}

/**
 * Asks testcontainers for a container runtime in a child process. In this process a runtime that
 * accepts the connection but never answers (a stale DOCKER_HOST, a stopped VM) would leave a
 * socket open that no timeout can close, and jest would never exit.
 */
function probeContainerRuntime(): Promise<void> {
  const script =
    `require(${JSON.stringify(require.resolve('testcontainers'))}).getContainerRuntimeClient().then(` +
    '() => process.exit(0), (e) => { process.stderr.write(String((e && e.message) || e)); process.exit(1); })';
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['-e', script],
      { timeout: RUNTIME_PROBE_MS, killSignal: 'SIGKILL' },
      (error, _stdout, stderr) => {
        if (!error) resolve();
        else if (error.killed) reject(new Error(`no container runtime answered within ${RUNTIME_PROBE_MS} ms`));
        else reject(new Error(stderr.trim().split('\n')[0] || error.message));
      },
    );
  });
}

async function startEmbedded(log: (line: string) => void): Promise<Server> {
  const started = Date.now();
  await sweepAbandonedEmbeddedDirs(reclaimEmbeddedPostgresDir, log);
  // mkdtemp makes the directory 0700: it is the data directory itself, handed to the postgres OS user.
  const dataDir = await fs.mkdtemp(path.join(tmpdir(), `${EMBEDDED_DIR_PREFIX}${process.pid}-`));
  try {
    const server = await startEmbeddedPostgres({ dataDir, database: SERVER_DATABASE, durable: false });
    log(`using an embedded PostgreSQL in ${dataDir} (${Date.now() - started} ms)`);
    return {
      kind: 'embedded',
      url: server.url,
      release: async () => {
        try {
          await server.stop();
        } finally {
          await fs.rm(dataDir, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    await fs.rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * A run killed before its teardown (Ctrl-C, SIGKILL) leaves its temporary cluster behind, and after
 * SIGKILL a server orphaned on it. The directory names carry the pid of the jest process that made
 * them: when that process is gone, the orphan is shut down and the directory removed.
 */
async function sweepAbandonedEmbeddedDirs(
  reclaim: (dataDir: string) => Promise<void>,
  log: (line: string) => void,
): Promise<void> {
  const names = await fs.readdir(tmpdir()).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(EMBEDDED_DIR_PREFIX)) continue;
    const pid = Number(name.slice(EMBEDDED_DIR_PREFIX.length).split('-')[0]);
    if (!Number.isInteger(pid) || pid <= 0 || isProcessAlive(pid)) continue;
    const dir = path.join(tmpdir(), name);
    try {
      if (!name.includes('.init-')) await reclaim(dir);
      await fs.rm(dir, { recursive: true, force: true });
      log(`removed ${dir}, left behind by killed run ${pid}`);
    } catch (error) {
      log(`left ${dir} alone: ${(error as Error).message}`);
    }
  }
}

/** Drops the template and the worker databases of this run (they all end in `_<runId>`). */
async function dropRunDatabases(server: Server, runId: string): Promise<void> {
  if (server.kind !== 'TEST_DATABASE_URL') return; // the whole server goes away
  await admin(server.url, async (client) => {
    const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database');
    const ours = rows
      .map((row) => row.datname)
      .filter((name) => name.startsWith(TEST_DATABASE_PREFIX) && name.endsWith(`_${runId}`));
    for (const name of ours) {
      await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`);
    }
  });
}

async function admin<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string, onTimeout?: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout?.();
      reject(new Error(`${message} within ${ms} ms`));
    }, ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function defaultLog(line: string): void {
  process.stderr.write(`[test database] ${line}\n`);
}
