import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './built-app';

/** A PgBouncer in transaction mode, started by a test in front of the test database server. */
export interface PgBouncer {
  /** The server's URL with the pooler's host and port (same user, password and database). */
  url(databaseUrl: string): string;
  stop(): Promise<void>;
  readonly log: string;
}

/** Where Debian's package puts it (`apt-get install pgbouncer`; .ci/run installs it where it may). */
const CANDIDATES = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'];

/** The binary, or why the pooler tests are skipped. */
export function findPgBouncer(): { binary: string } | { missing: string } {
  const binary = CANDIDATES.find((path) => existsSync(path));
  if (!binary) return { missing: `pgbouncer is not installed (${CANDIDATES.join(', ')}; apt-get install pgbouncer)` };
  if (process.getuid?.() === 0) {
    try {
      execFileSync('id', ['postgres'], { stdio: 'ignore' });
    } catch {
      return { missing: 'running as root, and there is no postgres user for pgbouncer to run as' };
    }
  }
  return { binary };
}

/**
 * Starts PgBouncer with its defaults but for `pool_mode = transaction` (what managed PostgreSQL offers as its
 * pooled endpoint) and what a test needs to reach it: a free port on 127.0.0.1, trust authentication, any
 * database forwarded to the server of `serverUrl`. `extra` adds settings (`ignore_startup_parameters = …`).
 */
export async function startPgBouncer(binary: string, serverUrl: string, extra: string[] = []): Promise<PgBouncer> {
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username || 'postgres');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'pgbouncer-'));
  chmodSync(dir, 0o777); // run as root, pgbouncer drops to `postgres`, which writes its log here
  const logFile = join(dir, 'pgbouncer.log');
  // Clients are trusted; PgBouncer logs in to the server with the auth file's password (the embedded PostgreSQL's
  // is random), as an operator's PgBouncer does. `"` is doubled inside a quoted field.
  const quoted = (value: string) => `"${value.replace(/"/g, '""')}"`;
  const password = decodeURIComponent(server.password ?? '');
  writeFileSync(join(dir, 'userlist.txt'), `${quoted(user)} ${quoted(password)}\n`);
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      'pool_mode = transaction',
      `logfile = ${logFile}`,
      ...extra,
      '',
    ].join('\n'),
  );
  const args = [join(dir, 'pgbouncer.ini')];
  if (process.getuid?.() === 0) args.unshift('-u', 'postgres');
  const child: ChildProcess = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const readLog = () => output + (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited (${child.exitCode}):\n${readLog()}`);
    if (/listening on 127\.0\.0\.1:/.test(readLog())) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`pgbouncer did not listen within 10 s:\n${readLog()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url(databaseUrl: string) {
      const pooled = new URL(databaseUrl);
      pooled.hostname = '127.0.0.1';
      pooled.port = String(port);
      return pooled.toString();
    },
    get log() {
      return readLog();
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGINT');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
