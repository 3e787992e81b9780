import { Client } from 'pg';
import { Drain } from '../src/common/drain/drain.service';
import { eventually } from './support/eventually';
import { capturedLog } from './support/log-capture';
import { lockWaiters } from './support/sessions';
import { ADMIN_KEY, TestApp, expectError } from './support/test-app';

// (other test files may leave their categories behind on this worker's database: a name of our own)
const CATEGORY = 'Kept through the drain';

/** Resolves once a query of this database waits for a lock (the request is then surely in flight). */
async function someoneWaitsForALock(client: Client): Promise<void> {
  await eventually(
    () => lockWaiters(client),
    (n) => n > 0,
  );
}

describe('Health during shutdown, and readiness of the dependencies (HTTP, real PostgreSQL)', () => {
  let api: TestApp;
  let locker: Client;

  beforeEach(async () => {
    api = await TestApp.start();
    locker = new Client({ connectionString: api.databaseUrl });
    await locker.connect();
    expect((await api.post('/categories', { key: ADMIN_KEY, body: { name: CATEGORY } })).status).toBe(201);
    // A request that stays in flight until the test lets it go: the categories table is locked.
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE categories IN ACCESS EXCLUSIVE MODE');
  });

  afterEach(async () => {
    await locker.query('ROLLBACK').catch(() => undefined);
    await locker.end();
    await api.close();
  });

  it('on shutdown: /health/ready 503 at once, new requests refused, the one in flight finishes', async () => {
    const inFlight = api.get('/categories', { key: ADMIN_KEY });
    await someoneWaitsForALock(locker);

    const drained = api.app.get(Drain).drain(30_000);

    const ready = await api.get('/health/ready');
    expectError(ready, 503, 'service_unavailable');
    expect(ready.body.message).toMatch(/shutting down/);
    expect((await api.get('/health/live')).status).toBe(200);
    const refused = await api.get('/categories', { key: ADMIN_KEY });
    expectError(refused, 503, 'service_unavailable');
    expect(refused.headers.get('retry-after')).toBe('1');

    await locker.query('COMMIT');
    const finished = await inFlight;
    expect(finished.status).toBe(200);
    expect(finished.body.map((c: { name: string }) => c.name)).toEqual([CATEGORY]);
    await expect(drained).resolves.toBe(true);
  });

  it('stops waiting for requests in flight at the deadline (SHUTDOWN_TIMEOUT_MS)', async () => {
    const inFlight = api.get('/categories', { key: ADMIN_KEY });
    await someoneWaitsForALock(locker);

    await expect(api.app.get(Drain).drain(200)).resolves.toBe(false);

    await locker.query('COMMIT');
    expect((await inFlight).status).toBe(200);
  });

  it('stays ready (200, degraded) while the configured Redis does not answer; redis_up says 0', async () => {
    await locker.query('COMMIT');
    // A closed port: rate limits fail open without Redis, so the process still serves and must stay in rotation.
    const withRedis = await TestApp.startOn(api.databaseUrl, { auth: { redisUrl: 'redis://127.0.0.1:1' } });
    try {
      const ready = await withRedis.get('/health/ready');
      expect(ready.status).toBe(200);
      expect(ready.body).toEqual({ status: 'degraded', redis: 'down' });
      expect((await withRedis.get('/categories', { key: ADMIN_KEY })).status).toBe(200);
      const metrics = await withRedis.get('/metrics', { key: ADMIN_KEY });
      expect(metrics.text).toMatch(/^redis_up 0$/m);
    } finally {
      await withRedis.close();
    }
  });

  const withTestRedis = process.env['TEST_REDIS_URL'] ? it : it.skip;
  withTestRedis('is ready with a Redis that answers (TEST_REDIS_URL)', async () => {
    await locker.query('COMMIT');
    const withRedis = await TestApp.startOn(api.databaseUrl, { auth: { redisUrl: process.env['TEST_REDIS_URL'] } });
    try {
      expect((await withRedis.get('/health/ready')).body).toEqual({ status: 'ok', redis: 'up' });
      expect((await withRedis.get('/metrics', { key: ADMIN_KEY })).text).toMatch(/^redis_up 1$/m);
    } finally {
      await withRedis.close();
    }
  });
});

// Issue 36, item 9b: during a drain every refused request logged a warning and an error-level access line (3,460
// lines in 2.5 s for 1,730 refusals). Now its info access line is all, and the readiness probe's 503 is no error.
describe('the log of a drain', () => {
  const { lines: entries, logger } = capturedLog();
  let api: TestApp;

  beforeAll(async () => {
    api = await TestApp.start({}, { logger });
  });
  afterAll(() => api.close());

  it('has one info access line per refused request, and no warning or error line', async () => {
    await expect(api.app.get(Drain).drain(1000)).resolves.toBe(true);
    entries.length = 0;
    const refused = await Promise.all(Array.from({ length: 20 }, () => api.get('/categories', { key: ADMIN_KEY })));
    for (const response of refused) expectError(response, 503, 'service_unavailable');
    expectError(await api.get('/health/ready'), 503, 'service_unavailable');
    await new Promise((resolve) => setTimeout(resolve, 100)); // the access lines are written once sent

    expect(entries.filter((entry) => ['warn', 'error', 'fatal'].includes(String(entry['level'])))).toEqual([]);
    const ready = entries.filter((entry) => entry['route'] === '/health/ready');
    expect(ready).toEqual([expect.objectContaining({ level: 'info', status: 503 })]);
    const lines = entries.filter((entry) => entry['route'] !== '/health/ready');
    expect(lines).toHaveLength(20);
    expect(lines.map((entry) => entry['requestId']).sort()).toEqual(
      refused.map((response) => response.headers.get('x-request-id')).sort(),
    );
    for (const line of lines) expect(line).toMatchObject({ level: 'info', status: 503, route: '/categories' });
    expect(api.app.get(Drain).refused).toBe(20);
  });
});
