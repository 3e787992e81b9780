import { createWorker } from '../src/assembly/assembly';
import { loadConfig, withConfig } from '../src/config/app-config';
import { ADMIN_KEY, TestApp, expectError } from './support/test-app';
import { eventually, WebhookReceiver } from './support/webhook-receiver';

/** The samples of one metric: `name{labels} value` lines, with the labels parsed. */
function samples(text: string, name: string): Array<{ labels: Record<string, string>; value: number }> {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .map((line) => {
      const match = /^[^{\s]+(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`unparsable sample: ${line}`);
      const labels = Object.fromEntries([...(match[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
      return { labels, value: Number(match[2]) };
    });
}

describe('GET /metrics (Prometheus, HTTP, real PostgreSQL)', () => {
  let api: TestApp;
  let customer: string;

  beforeAll(async () => {
    api = await TestApp.start();
    customer = (await api.customer()).key;
  });
  afterAll(() => api.close());

  it('is for the administrator only: 401 without a key, 403 for a customer', async () => {
    expectError(await api.get('/metrics'), 401, 'unauthorized');
    expectError(await api.get('/metrics', { key: customer }), 403, 'forbidden');
    const response = await api.get('/metrics', { key: ADMIN_KEY });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it('times requests by method, route template and status, never by raw id', async () => {
    await api.get('/pets/7654321', { key: customer });
    await api.get('/no/such/path/7654322');
    const text = (await api.get('/metrics', { key: ADMIN_KEY })).body as string;
    const counts = samples(text, 'http_request_duration_seconds_count');
    expect(counts).toContainEqual({ labels: { method: 'GET', route: '/pets/:petId', status_code: '404' }, value: 1 });
    expect(counts).toContainEqual({ labels: { method: 'GET', route: '(unmatched)', status_code: '404' }, value: 1 });
    expect(samples(text, 'http_request_duration_seconds_bucket').length).toBeGreaterThan(10);
    expect(text).not.toMatch(/765432[12]/);
  });

  it('has the process metrics and the database pool', async () => {
    const text = (await api.get('/metrics', { key: ADMIN_KEY })).body as string;
    for (const name of [
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
    ]) {
      expect(samples(text, name)).toHaveLength(1);
    }
    expect(text).toContain('# TYPE nodejs_gc_duration_seconds histogram');
    const [total] = samples(text, 'db_pool_connections_total');
    const [idle] = samples(text, 'db_pool_connections_idle');
    const [waiting] = samples(text, 'db_pool_waiting_requests');
    expect(total.value).toBeGreaterThanOrEqual(1);
    expect(idle.value).toBeLessThanOrEqual(total.value);
    expect(waiting.value).toBeGreaterThanOrEqual(0);
    expect(samples(text, 'db_up')).toEqual([{ labels: {}, value: 1 }]);
    // Without DATABASE_REPLICA_URLS nothing of the read routing exists (read-replicas.e2e.spec.ts has them).
    expect(text).not.toContain('db_replica_');
  });

  it('has the message queue: depth, age of the oldest queued, failed messages, failed attempts', async () => {
    await api.post('/messages', { key: customer, body: { message: 'waiting (no worker here)' } });
    await api.post('/messages', { key: customer, body: { message: 'waiting too' } });
    const text = (await api.get('/metrics', { key: ADMIN_KEY })).body as string;
    expect(samples(text, 'message_queue_depth')).toEqual([{ labels: {}, value: 2 }]);
    expect(samples(text, 'message_queue_oldest_age_seconds')[0].value).toBeGreaterThanOrEqual(0);
    expect(samples(text, 'message_queue_failed_messages')).toEqual([{ labels: {}, value: 0 }]);
    expect(samples(text, 'message_delivery_failures_total')).toEqual([{ labels: {}, value: 0 }]);
  });

  it('counts rate-limit rejections (429)', async () => {
    const limited = await TestApp.startOn(api.databaseUrl, { auth: { rateLimitPerMinute: 3 } });
    try {
      const key = (await api.customer('Limited')).key; // 3 requests a minute on the limited instance
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await limited.get('/accounts/me', { key })).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      const text = (await limited.get('/metrics', { key: ADMIN_KEY })).body as string;
      expect(samples(text, 'rate_limit_rejections_total')).toEqual([{ labels: {}, value: 2 }]);
    } finally {
      await limited.close();
    }
  });

  it('keeps one registry per instance', async () => {
    const other = await TestApp.startOn(api.databaseUrl);
    try {
      const text = (await other.get('/metrics', { key: ADMIN_KEY })).body as string;
      expect(
        samples(text, 'http_request_duration_seconds_count').filter((s) => s.labels['route'] === '/pets/:petId'),
      ).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('is described in the OpenAPI document as text/plain for administrators', async () => {
    const doc = (await api.get('/openapi.json')).body;
    const operation = doc.paths['/metrics'].get;
    expect(Object.keys(operation.responses['200'].content)).toEqual(['text/plain']);
    expect(operation.security).toEqual([{ bearer: [] }]);
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['401', '403']));
  });
});

// Issue 36, item 9d: nothing showed a webhook queue that grows, deliveries that fail, or endpoints failing.
describe('the webhook queue metrics (worker on, a local receiver)', () => {
  let api: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    api = await TestApp.start({
      messaging: { worker: true },
      webhooks: { allowPrivate: true, retryDelaysMs: [100, 100, 100] },
    });
  });
  afterAll(async () => {
    await api?.close();
    await receiver?.close();
  });

  const scrape = async () => {
    const text = (await api.get('/metrics', { key: ADMIN_KEY })).body as string;
    const value = (name: string) => {
      const found = samples(text, name);
      expect({ name, found: found.length }).toEqual({ name, found: 1 });
      return found[0].value;
    };
    return {
      pending: value('webhook_deliveries_pending'),
      retrying: value('webhook_deliveries_retrying'),
      oldestDue: value('webhook_deliveries_oldest_due_age_seconds'),
      failingEndpoints: value('webhook_endpoints_failing'),
      failures: value('webhook_delivery_failures_total'),
      failed: value('webhook_deliveries_failed_total'),
    };
  };

  it('counts failed attempts, given-up deliveries, failing endpoints; pending, retrying, overdue', async () => {
    const before = await scrape();
    const { key } = await api.customer('Metered hooks');
    receiver.answer = (request) => (request.path === '/failing' ? 503 : 200);
    const hook = await api.post('/webhooks/endpoints', {
      key,
      body: { url: `${receiver.url}/failing`, events: ['order.placed'] },
    });
    expect(hook.status).toBe(201);
    // A ping is sent once, never retried: one failed attempt, one delivery given up, the endpoint failing.
    expect((await api.post(`/webhooks/endpoints/${hook.body.id}/test`, { key })).status).toBe(202);
    const afterPing = await eventually(scrape, (now) => now.failed === before.failed + 1);
    expect(afterPing).toMatchObject({
      failures: before.failures + 1,
      failingEndpoints: before.failingEndpoints + 1,
    });

    // A delivery left pending a minute past its due time after a failed attempt (no job will run it).
    const [event] = await api.sql<{ id: string }>(
      `INSERT INTO webhook_events (id, type, subject_owner_id, body, created_at)
       VALUES (gen_random_uuid(), 'order.placed', NULL, '{}', now()) RETURNING id`,
    );
    await api.sql(
      `INSERT INTO webhook_deliveries (event_id, endpoint_id, status, attempts, next_attempt_at, created_at)
       VALUES ($1, $2, 'pending', 1, now() - interval '60 seconds', now() - interval '70 seconds')`,
      [event.id, hook.body.id],
    );
    const overdue = await scrape();
    expect(overdue).toMatchObject({ pending: before.pending + 1, retrying: before.retrying + 1 });
    expect(overdue.oldestDue).toBeGreaterThanOrEqual(60);
  });
});

describe('METRICS_PORT: /metrics on a port of its own, without auth', () => {
  const METRICS_PORT = 3551;
  let api: TestApp;

  beforeAll(async () => {
    api = await TestApp.start({ observability: { metricsPort: METRICS_PORT }, http: { host: '127.0.0.1' } });
  });
  afterAll(() => api.close());

  it('answers there without a key, and no longer on the API port', async () => {
    const response = await fetch(`http://127.0.0.1:${METRICS_PORT}/metrics`);
    expect(response.status).toBe(200);
    expect(samples(await response.text(), 'process_resident_memory_bytes')).toHaveLength(1);
    expectError(await api.get('/metrics', { key: ADMIN_KEY }), 404, 'not_found');
    expect((await api.get('/openapi.json')).body.paths).not.toHaveProperty('/metrics');
  });

  // Issue 36, item 9a: a worker-only process runs no LISTEN connection, and reported db_change_listener_up 0 forever.
  it('has db_change_listener_up 1 where a listener runs, and no such gauge in a worker-only process', async () => {
    const served = await fetch(`http://127.0.0.1:${METRICS_PORT}/metrics`).then((r) => r.text());
    expect(samples(served, 'db_change_listener_up')).toEqual([{ labels: {}, value: 1 }]);
    const worker = await createWorker({
      config: withConfig(loadConfig({}), {
        messaging: { worker: false },
        observability: { metricsPort: METRICS_PORT + 2 },
        http: { host: '127.0.0.1' },
      }),
      databaseUrl: api.databaseUrl,
      logger: false,
    });
    try {
      const text = await fetch(`http://127.0.0.1:${METRICS_PORT + 2}/metrics`).then((r) => r.text());
      expect(samples(text, 'db_pool_connections_total')).toHaveLength(1);
      expect(text).not.toContain('db_change_listener_up');
    } finally {
      await worker.close();
    }
  });

  it('frees the port when the application closes', async () => {
    const other = await TestApp.startOn(api.databaseUrl, {
      observability: { metricsPort: METRICS_PORT + 1 },
      http: { host: '127.0.0.1' },
    });
    await other.close();
    await expect(fetch(`http://127.0.0.1:${METRICS_PORT + 1}/metrics`)).rejects.toThrow();
  });
});
