import { Client } from 'pg';
import { eventually } from './support/eventually';
import { capturedLog } from './support/log-capture';
import { lockWaiters } from './support/sessions';
import { ADMIN_KEY, TestApp, TestResponse, expectError } from './support/test-app';

/**
 * The admission limit on a real app and a real database: a limit of 2 (min = max), two orders held in flight by a
 * row lock a test connection holds on the pet's stock row, then what a saturated instance answers. The queue's wait
 * is long (a minute): whether a request waits or is refused at once depends on the queue's room only, never on time.
 */
jest.setTimeout(60_000);

/** The one origin CORS_ORIGINS allows here. */
const SHOP = 'https://shop.example';

describe('adaptive admission (HTTP, real PostgreSQL)', () => {
  let api: TestApp;
  let locker: Client;
  let customer: string;
  let petId: number;

  beforeAll(async () => {
    api = await TestApp.start({
      // The loop governor off: a loaded host's loop delay must not cap the limit this test fixes at 2 (its own tests
      // are loop-governor.spec.ts and the overload bench).
      admission: { mode: 'on', limitMin: 2, limitMax: 2, queueMs: 60_000, loopDelayMs: 0 },
      // The held orders wait on the row lock until the test lets it go: the default 5 s statement timeout ended them
      // first on a loaded CI host (the steps before took longer), which freed the limit and emptied the queue.
      database: { statementTimeoutMs: 50_000, queryTimeoutMs: 55_000 },
      http: { corsOrigins: [SHOP], handlerTimeoutMs: 58_000 },
    });
    locker = new Client({ connectionString: api.databaseUrl });
    await locker.connect();
    customer = (await api.customer('Busy')).key;
    // Its key verified once, so that admission knows its account from its first request here (clients.ts): a key
    // new to the instance counts against its address, which would make it two clients with a share each.
    expect((await api.get('/accounts/me', { key: customer })).status).toBe(200);
    const category = await api.post('/categories', { key: ADMIN_KEY, body: { name: 'Admission kind' } });
    const pet = await api.post('/pets', { key: ADMIN_KEY, body: { name: 'Held', categoryId: category.body.id } });
    petId = pet.body.id;
    expect((await api.put(`/store/inventory/${petId}`, { key: ADMIN_KEY, body: { quantity: 50 } })).status).toBe(200);
  });

  afterAll(async () => {
    await locker.query('ROLLBACK').catch(() => undefined);
    await locker.end();
    await api.close();
  });

  /** The value of one sample of /metrics (exempt from admission: it answers while the instance is saturated). */
  async function metric(sample: string): Promise<number | undefined> {
    const response = await api.get('/metrics', { key: ADMIN_KEY });
    expect(response.status).toBe(200);
    const line = (response.body as string).split('\n').find((l) => l.startsWith(`${sample} `));
    return line === undefined ? undefined : Number(line.slice(sample.length + 1));
  }

  function order(): Promise<TestResponse> {
    return api.post('/store/orders', { key: customer, body: { petId, quantity: 1 } });
  }

  function expectOverloaded(response: TestResponse): void {
    expectError(response, 503, 'overloaded');
    expect(response.headers.get('retry-after')).toBe('1');
    expect(response.headers.get('x-request-id')).toBeTruthy();
  }

  it('refuses what it can neither admit nor queue (503 overloaded), answers probes, then admits', async () => {
    await locker.query('BEGIN');
    await locker.query('SELECT 1 FROM stock WHERE pet_id = $1 FOR UPDATE', [petId]);
    // Two orders in flight: the limit. Each waits for the row lock inside its transaction.
    const held = [order(), order()];
    await eventually(
      () => lockWaiters(locker),
      (n) => n === 2,
    );
    expect(await metric('admission_limit')).toBe(2);
    expect(await metric('admission_in_flight')).toBe(2);

    // A read waits in the queue (its room is the limit, 2)…
    const queuedRead = api.get(`/store/inventory/${petId}`, { key: customer });
    await eventually(
      () => metric('admission_queued'),
      (n) => n === 1,
    );
    // …a write may only take half of it: with one waiting, a write is refused (once its body has arrived, before the
    // guard), whoever sends it.
    expectOverloaded(await order());
    expectOverloaded(await api.post('/store/orders', { key: 'psk_not-a-key', body: { petId, quantity: 1 } }));
    // A second read takes the queue's last place; a third is refused.
    const secondQueuedRead = api.get('/pets', { key: customer });
    await eventually(
      () => metric('admission_queued'),
      (n) => n === 2,
    );
    expectOverloaded(await api.get('/accounts/me', { key: customer }));
    // A refusal carries the CORS headers the allowed origin gets on any answer (the CORS hook runs after admission),
    // so its script can read the 503 and Retry-After; another origin gets none. A preflight is never refused.
    const fromShop = await api.get('/accounts/me', { key: customer, headers: { origin: SHOP } });
    expectOverloaded(fromShop);
    expect(fromShop.headers.get('access-control-allow-origin')).toBe(SHOP);
    expect(fromShop.headers.get('access-control-expose-headers')).toContain('Retry-After');
    expect(fromShop.headers.get('vary')).toContain('Origin');
    const fromElsewhere = await api.get('/accounts/me', { key: customer, headers: { origin: 'https://evil.example' } });
    expectOverloaded(fromElsewhere);
    expect(fromElsewhere.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await fetch(`${api.baseUrl}/store/orders`, {
      method: 'OPTIONS',
      headers: { origin: SHOP, 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(SHOP);

    // Never shed: the probes, the metrics, the description.
    expect((await api.get('/health/live')).status).toBe(200);
    expect((await api.get('/health/ready')).status).toBe(200);
    expect((await api.get('/metrics', { key: ADMIN_KEY })).status).toBe(200);
    expect((await fetch(`${api.baseUrl}/openapi.json`)).status).toBe(200);
    expect(await metric('admission_in_flight')).toBe(2);
    expect(await metric('admission_queued')).toBe(2);
    expect(await metric('admission_shed_total{route="/store/orders"}')).toBe(2);
    expect(await metric('admission_shed_total{route="/accounts/me"}')).toBe(3);
    expect(await metric('admission_shed_total{route="/health/live"}')).toBeUndefined();

    // The lock goes: the held orders finish, and the waiting reads are admitted in their turn.
    await locker.query('COMMIT');
    expect((await Promise.all(held)).map((r) => r.status)).toEqual([201, 201]);
    expect((await queuedRead).status).toBe(200);
    expect((await secondQueuedRead).status).toBe(200);
    await eventually(
      () => metric('admission_in_flight'),
      (n) => n === 0,
    );
    expect(await metric('admission_queued')).toBe(0);

    // Admitted again, reads and writes.
    expect((await order()).status).toBe(201);
    expect((await api.get('/accounts/me', { key: customer })).status).toBe(200);
    expect(await metric('admission_shed_total{route="/store/orders"}')).toBe(2);
  });

  it('refuses a queued request once ADMISSION_QUEUE_MS passes without a slot; logs it at info alone', async () => {
    const { lines, logger } = capturedLog();
    const short = await TestApp.startOn(
      api.databaseUrl,
      {
        admission: { mode: 'on', limitMin: 1, limitMax: 1, queueMs: 20, loopDelayMs: 0 },
        database: { statementTimeoutMs: 50_000, queryTimeoutMs: 55_000 },
        http: { handlerTimeoutMs: 58_000 },
      },
      { logger },
    );
    let heldOrder: Promise<TestResponse> | undefined;
    try {
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM stock WHERE pet_id = $1 FOR UPDATE', [petId]);
      heldOrder = short.post('/store/orders', { key: customer, body: { petId, quantity: 1 } });
      await eventually(
        () => lockWaiters(locker),
        (n) => n === 1,
      );
      // The slot stays taken while the lock is held: the read's wait ends with its deadline, whenever that is.
      const refused = await short.get('/accounts/me', { key: customer });
      expectOverloaded(refused);
      // Expected under overload: its access line, at info (not error), and no other line about it.
      const id = refused.headers.get('x-request-id');
      const about = await eventually(
        () => lines.filter((l) => l['requestId'] === id),
        (found) => found.some((l) => l['status'] === 503),
      );
      expect(about.map((l) => [l['level'], l['route'], l['status']])).toEqual([['info', '/accounts/me', 503]]);
      await locker.query('COMMIT');
      expect((await heldOrder).status).toBe(201);
      expect((await short.get('/accounts/me', { key: customer })).status).toBe(200);
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await heldOrder?.catch(() => undefined);
      await short.close();
    }
  });

  it('is off with ADMISSION=off: every request is admitted, and the limit reads 0', async () => {
    const off = await TestApp.startOn(api.databaseUrl, { admission: { mode: 'off', limitMin: 1, limitMax: 1 } });
    try {
      const answers = await Promise.all(Array.from({ length: 5 }, () => off.get('/accounts/me', { key: customer })));
      expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      const text = (await off.get('/metrics', { key: ADMIN_KEY })).body as string;
      expect(text).toMatch(/^admission_limit 0$/m);
    } finally {
      await off.close();
    }
  });
});
