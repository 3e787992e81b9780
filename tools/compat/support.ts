/* Shared by the compatibility and restore checks (tools/compat): a PostgreSQL server, databases, API processes. */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { Client } from 'pg';

/** An administrator key the checks start the service with (ADMIN_API_KEY). */
export const ADMIN_KEY = `compat-admin-${randomUUID()}-${randomUUID()}`;

export const log = (message: string) => console.log(`[compat] ${message}`);

/** A server URL whose database name contains `test` (where a database may be created and dropped), or null. */
export async function databaseServer(): Promise<string | null> {
  const candidates = [process.env['TEST_DATABASE_URL'], 'postgres://postgres@127.0.0.1:5432/test'];
  for (const url of candidates) {
    if (!url) continue;
    const client = new Client({ connectionString: url, connectionTimeoutMillis: 2000 });
    try {
      await client.connect();
      await client.end();
      return url;
    } catch {
      await client.end().catch(() => undefined);
    }
  }
  return null;
}

export function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

export async function createDatabase(server: string, name: string): Promise<string> {
  const client = new Client({ connectionString: server });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
  return withDatabase(server, name);
}

export async function dropDatabase(server: string, name: string): Promise<void> {
  const client = new Client({ connectionString: server });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolvePort(port));
    });
  });
}

/** The environment without its empty variables: the service refuses a variable set but empty, '' here means unset. */
export function withoutEmpty(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
}

export async function startApi(main: string, databaseUrl: string, env: Record<string, string> = {}) {
  const port = await freePort();
  let output = '';
  const child = spawn(process.execPath, [main], {
    // '' below means unset: the service refuses a variable set but empty (issue 50).
    env: withoutEmpty({
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      ADMIN_API_KEY: ADMIN_KEY,
      RATE_LIMIT_PER_MINUTE: '100000',
      LOG_LEVEL: 'warn',
      METRICS_PORT: '',
      REDIS_URL: '',
      ...env,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const baseUrl = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`the API exited during start-up:\n${output}`);
    const ready = await fetch(`${baseUrl}/health/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    baseUrl,
    output: () => output,
    stop: () =>
      new Promise<void>((resolveStop) => {
        if (child.exitCode !== null) return resolveStop();
        child.once('exit', () => resolveStop());
        child.kill('SIGTERM');
      }),
  };
}
