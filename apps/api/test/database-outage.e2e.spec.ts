import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedPostgresServer, startEmbeddedPostgres } from '@petstore/embedded-postgres';
import { migrateDatabase } from '@petstore/infrastructure';
import { Client } from 'pg';
import { ADMIN_KEY, TestApp } from './support/test-app';

/**
 * A database that stops answering (SIGSTOP: a frozen host, a partition), loses a connection in
 * the middle of a request, or restarts. Run on a PostgreSQL of its own, never the shared one.
 * The service must answer 503 service_unavailable within its time bounds, and serve again by
 * itself once the database answers. No duration is measured: a request that hangs is aborted
 * after HANG_MS, far beyond the bounds, and fails the test.
 */
const HANG_MS = 20_000;
jest.setTimeout(120_000);

const BOUNDS = {
  acquireTimeoutMs: 1000,
  statementTimeoutMs: 1500,
  queryTimeoutMs: 2000,
  idleInTransactionTimeoutMs: 3000,
};

interface Answer {
  status: number;
  body: { code?: string; status?: number; message?: string } | undefined;
  retryAfter: string | null;
}

async function call(api: TestApp, method: string, path: string, key?: string, body?: unknown): Promise<Answer> {
  const response = await fetch(api.baseUrl + path, {
    method,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(HANG_MS),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? JSON.parse(text) : undefined,
    retryAfter: response.headers.get('retry-after'),
  };
}

function expectUnavailable(answer: Answer, codes = ['service_unavailable']): void {
  expect(answer.status).toBe(503);
  expect(codes).toContain(answer.body?.code);
  expect(answer.body).toEqual({
    code: answer.body?.code,
    status: 503,
    message: expect.any(String),
    documentationUrl: `/docs/errors#${answer.body?.code}`,
  });
  expect(Number(answer.retryAfter)).toBeGreaterThan(0);
}

/** Retries `request` until it answers `status` (at most `attempts` times, 250 ms apart); returns the last answer. */
async function eventually(request: () => Promise<Answer>, status: number, attempts = 40): Promise<Answer> {
  let answer = await request();
  for (let i = 1; i < attempts && answer.status !== status; i++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    answer = await request();
  }
  return answer;
}

/** The postmaster of `dataDir` and every process it started (its backends and workers). */
async function postgresProcesses(dataDir: string): Promise<number[]> {
  const postmaster = Number((await readFile(join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  const children: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === postmaster) children.push(Number(entry));
  }
  return [postmaster, ...children];
}

function signal(pids: number[], name: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, name);
    } catch {
      // gone meanwhile
    }
  }
}

/** node-postgres's words for a connection not opened within `connectionTimeoutMillis`. */
const FIRST_CONNECTION_TIMEOUT = /connection timeout|timeout exceeded when trying to connect/i;

/**
 * The app on `url` with `bounds`. Its start-up opens one connection within the acquire bound (1 s here): on a host
 * losing a third of its time to steal, a new cluster's first backend once took longer and the whole file failed
 * before testing anything. Only that timeout is retried (three starts at most); any other failure fails at once.
 */
async function startWithin(bounds: typeof BOUNDS, url: string): Promise<TestApp> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await TestApp.startOn(url, { database: bounds, auth: { apiKeyCacheSeconds: 0 } });
    } catch (error) {
      const firstConnectionTimedOut = FIRST_CONNECTION_TIMEOUT.test(String((error as Error)?.message));
      if (attempt === 3 || !firstConnectionTimedOut) throw error;
    }
  }
}

describe('the database stops answering, loses a connection, restarts (dedicated embedded PostgreSQL)', () => {
  let dataDir: string;
  let server: EmbeddedPostgresServer;
  let api: TestApp;
  let frozen: number[] = [];
  let customer: string;
  let petId: number;

  beforeAll(async () => {
    // mkdtemp makes a 0700 directory: it is the cluster's data directory itself
    // (run as root, the postgres user owns it).
    dataDir = await mkdtemp(join(tmpdir(), 'petstore-outage-'));
    server = await startEmbeddedPostgres({ dataDir, database: 'petstore_test_outage', durable: false });
    await migrateDatabase(server.url);
    // No cache of verified keys: every request here must reach the database (a cached key answers
    // GET /accounts/me without it until the revocation listener notices the outage).
    api = await startWithin(BOUNDS, server.url);
    customer = (await api.customer('Outage')).key;
    const category = await call(api, 'POST', '/categories', ADMIN_KEY, { name: 'Outage kind' });
    const pet = await call(api, 'POST', '/pets', ADMIN_KEY, {
      name: 'Outage pet',
      categoryId: category.body && (category.body as { id: number }).id,
    });
    petId = (pet.body as { id: number }).id;
    expect((await call(api, 'PUT', `/store/inventory/${petId}`, ADMIN_KEY, { quantity: 50 })).status).toBe(200);
  });

  afterAll(async () => {
    signal(frozen, 'SIGCONT');
    await api?.close();
    await server?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const me = () => call(api, 'GET', '/accounts/me', customer);
  const order = () => call(api, 'POST', '/store/orders', customer, { petId, quantity: 1 });

  it('frozen (SIGSTOP): every request, more than the pool holds, gets 503 + Retry-After; then 200 again', async () => {
    expect((await me()).status).toBe(200);
    frozen = await postgresProcesses(dataDir);
    signal(frozen, 'SIGSTOP');
    try {
      // 15 at once: some wait on the pool (acquire timeout), the others on a frozen connection (query timeout).
      const answers = await Promise.all([
        ...Array.from({ length: 12 }, me),
        order(),
        order(),
        call(api, 'GET', '/pets', customer),
      ]);
      answers.forEach((answer) => expectUnavailable(answer));
      // And again, now that the pool has dropped the connections that timed out: new ones cannot open.
      expectUnavailable(await me());
      expect((await call(api, 'GET', '/health/ready')).status).toBe(503);
    } finally {
      signal(frozen, 'SIGCONT');
      frozen = [];
    }
    expect((await eventually(me, 200)).status).toBe(200);
    expect((await eventually(order, 201)).status).toBe(201);
    expect((await call(api, 'GET', '/health/ready')).status).toBe(200);
  });

  it('a request whose connection is terminated while it waits (pg_terminate_backend) gets 503, not 500', async () => {
    const holder = new Client({ connectionString: server.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM stock WHERE pet_id = $1 FOR UPDATE', [petId]);
      const pending = order();
      let waiting: number | undefined;
      for (let i = 0; i < 200 && waiting === undefined; i++) {
        const { rows } = await holder.query(
          `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
        );
        waiting = rows[0]?.pid;
        if (waiting === undefined) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(waiting).toBeDefined();
      await holder.query('SELECT pg_terminate_backend($1)', [waiting]);
      expectUnavailable(await pending);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    expect((await order()).status).toBe(201);
  });

  it('a database restart: the request in flight and those while it is down get 503, then 201 again', async () => {
    const holder = new Client({ connectionString: server.url });
    holder.on('error', () => undefined); // the restart ends this session too
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM stock WHERE pet_id = $1 FOR UPDATE', [petId]);
    const inFlight = order();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await server.stop();
    // The stop ends the holder's session and the order's at once, in no fixed order: the order fails on the lock
    // (service_unavailable), or, once the lock is released first, with its COMMIT already sent (outcome_unknown).
    expectUnavailable(await inFlight, ['service_unavailable', 'outcome_unknown']);
    expectUnavailable(await order());
    await holder.end().catch(() => undefined);
    server = await startEmbeddedPostgres({
      dataDir,
      port: server.port,
      database: 'petstore_test_outage',
      durable: false,
    });
    expect((await eventually(order, 201)).status).toBe(201);
  });
});
