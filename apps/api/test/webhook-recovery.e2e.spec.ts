import { StoreFixtures } from './support/store-fixtures';
import { ADMIN_KEY, TestApp, TestResponse, expectError } from './support/test-app';
import { eventually, WebhookReceiver } from './support/webhook-receiver';

// Deliveries wait for pg-boss's polling (0.5 s); a failed attempt waits an hour here, longer than the test.
jest.setTimeout(90_000);

const HOUR = 3_600_000;
const OUTBOUND_POLICY = '"default";q=100;w=60, "webhook-outbound";q=5;w=60';

/**
 * Issue 49, "recover, not redeliver one by one": after a 15 s outage of a receiver 246 deliveries waited, and sending
 * them again took a retry each, 5 a minute. `POST /webhooks/endpoints/{id}/recover {since, all?}` queues every failed
 * delivery since a time in one call, which counts once against the outbound budget; a retry of a delivery being sent
 * already (409 `delivery_pending`) spends nothing of it.
 */
describe('recovering the deliveries of an outage (HTTP, real PostgreSQL, worker on, a local receiver)', () => {
  let api: TestApp;
  let store: StoreFixtures;
  let receiver: WebhookReceiver;
  let hooks = 0;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    api = await TestApp.start({
      auth: { rateLimitPerMinute: 100 },
      messaging: { worker: true },
      webhooks: { allowPrivate: true, retryDelaysMs: [HOUR, HOUR] },
    });
    store = await StoreFixtures.on(api);
  });
  afterAll(async () => {
    await store?.close();
    await api?.close();
    await receiver?.close();
  });

  /** A customer with an endpoint on a path of its own, subscribed to its orders. */
  async function subscribed(name: string): Promise<{ key: string; hook: number; path: string }> {
    const { key } = await api.customer(name);
    const path = `/recovery-${++hooks}`;
    const created = await api.post('/webhooks/endpoints', {
      key,
      body: { url: `${receiver.url}${path}`, events: ['order.placed'] },
    });
    expect(created.status).toBe(201);
    return { key, hook: created.body.id as number, path };
  }

  const deliveriesOf = async (hook: number, key: string) =>
    (await api.get(`/webhooks/endpoints/${hook}/deliveries`, { key })).body as Array<Record<string, any>>;
  const recover = (hook: number, key: string, body: unknown) =>
    api.post(`/webhooks/endpoints/${hook}/recover`, { key, body });
  const remaining = (response: TestResponse) => response.headers.get('ratelimit');

  it('queues the failed deliveries of an outage in one call, which spends one unit; they are delivered', async () => {
    const { key, hook, path } = await subscribed('Down for a while');
    let down = false;
    receiver.answer = (request) => (request.path === path && down ? 503 : 204);
    const pet = await store.pet({ quantity: 10 });
    await store.placed(key, pet);
    await eventually(
      () => deliveriesOf(hook, key),
      (list) => list[0]?.status === 'delivered',
    );
    const since = new Date().toISOString();

    down = true;
    for (let i = 0; i < 5; i++) await store.placed(key, pet);
    const failed = await eventually(
      () => deliveriesOf(hook, key),
      (list) => list.length === 6 && list.slice(0, 5).every((d) => d.attempts === 1),
    );
    for (const delivery of failed.slice(0, 5))
      expect(delivery).toMatchObject({ status: 'pending', lastStatusCode: 503 });
    down = false;

    const recovered = await recover(hook, key, { since });
    expect(recovered.status).toBe(202);
    expect(recovered.body).toEqual({ queued: 5 });
    expect(recovered.headers.get('ratelimit-policy')).toBe(OUTBOUND_POLICY);
    expect(remaining(recovered)).toMatch(/^"webhook-outbound";r=4;t=\d+$/);
    const delivered = await eventually(
      () => deliveriesOf(hook, key),
      (list) => list.length === 6 && list.every((d) => d.status === 'delivered'),
    );
    expect(delivered.slice(0, 5).map((d) => d.attempts)).toEqual([2, 2, 2, 2, 2]);
    const ids = receiver.to(path).map((r) => r.headers['webhook-id']);
    expect(ids).toHaveLength(11); // the first order's once; each of the five twice, with the same webhook-id
    expect(new Set(ids).size).toBe(6);

    // Nothing failed any more: nothing to queue (the call counts all the same).
    const again = await recover(hook, key, { since });
    expect({ status: again.status, body: again.body }).toEqual({ status: 202, body: { queued: 0 } });
    expect(remaining(again)).toMatch(/^"webhook-outbound";r=3;t=\d+$/);
    // `all`: the delivered ones too (a receiver that lost what it had), since the same time.
    const all = await recover(hook, key, { since, all: true });
    expect({ status: all.status, body: all.body }).toEqual({ status: 202, body: { queued: 5 } });
    await eventually(
      () => receiver.to(path),
      (received) => received.length === 16,
    );
  });

  it('queues nothing twice: a delivery whose attempt is under way is left alone', async () => {
    const { key, hook, path } = await subscribed('Slow receiver');
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    receiver.hold = (request) => (request.path === path ? held : Promise.resolve());
    try {
      await store.placed(key, await store.pet({ quantity: 1 }));
      await receiver.nth(path, 1); // under way: the receiver holds its answer
      const since = new Date(Date.now() - 60_000).toISOString();
      const answers = await Promise.all([recover(hook, key, { since, all: true }), recover(hook, key, { since })]);
      expect(answers.map((a) => [a.status, a.body])).toEqual([
        [202, { queued: 0 }],
        [202, { queued: 0 }],
      ]);
    } finally {
      release();
      receiver.hold = () => Promise.resolve();
    }
    await eventually(
      () => deliveriesOf(hook, key),
      (list) => list[0]?.status === 'delivered' && list[0]?.attempts === 1,
    );
    expect(receiver.to(path)).toHaveLength(1);
  });

  it('answers a redelivery of a delivery being sent (409 delivery_pending) without spending the budget', async () => {
    const { key, hook, path } = await subscribed('Impatient');
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    receiver.hold = (request) => (request.path === path ? held : Promise.resolve());
    try {
      await store.placed(key, await store.pet({ quantity: 1 }));
      await receiver.nth(path, 1);
      const [sending] = await deliveriesOf(hook, key);
      // More refusals than the budget has units: each is a 409, never a 429, and counts on the general budget only.
      for (let i = 0; i < 7; i++) {
        const retried = await api.post(`/webhooks/endpoints/${hook}/deliveries/${sending.id}/retry`, { key });
        expectError(retried, 409, 'delivery_pending');
        expect(retried.headers.get('ratelimit-policy')).toBe('"default";q=100;w=60');
      }
    } finally {
      release();
      receiver.hold = () => Promise.resolve();
    }
    await eventually(
      () => deliveriesOf(hook, key),
      (list) => list[0]?.status === 'delivered',
    );
    // The five units are all there: five pings, then the sixth outbound request is refused.
    const pings: number[] = [];
    for (let i = 0; i < 5; i++) pings.push((await api.post(`/webhooks/endpoints/${hook}/test`, { key })).status);
    expect(pings).toEqual([202, 202, 202, 202, 202]);
    const refused = await recover(hook, key, { since: new Date().toISOString() });
    expectError(refused, 429, 'rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(remaining(refused)).toMatch(/^"webhook-outbound";r=0;t=\d+$/);
  });

  it('refuses bad input 400 in the Error shape, spending nothing; a read key is refused first', async () => {
    const { key, hook } = await subscribed('Careless');
    const daysAgo = (days: number) => new Date(Date.now() - days * 24 * HOUR).toISOString();
    const refusals: Array<[unknown, string]> = [
      [{}, 'since'],
      [{ since: 'yesterday' }, 'since'],
      [{ since: '2026-02-30T00:00:00Z' }, 'since'],
      [{ since: daysAgo(31) }, 'since'],
      [{ since: daysAgo(1), all: 'yes' }, 'all'],
      [{ since: daysAgo(1), until: daysAgo(0) }, 'until'],
    ];
    for (const [body, field] of refusals) {
      const refused = await recover(hook, key, body);
      expectError(refused, 400, 'validation_failed');
      expect({ body, fields: refused.body.details.map((d: { field: string }) => d.field) }).toEqual({
        body,
        fields: [field],
      });
    }
    const tooOld = await recover(hook, key, { since: daysAgo(31) });
    expect(tooOld.body.message).toMatch(/within the last 30 days/);
    const truncated = { key, raw: '{"since":', headers: { 'content-type': 'application/json' } };
    expectError(await api.post(`/webhooks/endpoints/${hook}/recover`, truncated), 400, 'invalid_json');

    const reader = (await api.post('/accounts/me/api-keys', { key, body: { scopes: ['read'] } })).body.key as string;
    for (let i = 0; i < 6; i++) {
      expectError(await recover(hook, reader, { since: daysAgo(1) }), 403, 'insufficient_scope');
    }
    // The budget is whole: five recoveries (the oldest allowed `since` among them), then 429.
    const statuses: number[] = [];
    for (const since of [daysAgo(29.99), daysAgo(1), daysAgo(1), daysAgo(0), daysAgo(0)]) {
      statuses.push((await recover(hook, key, { since, all: true })).status);
    }
    expect(statuses).toEqual([202, 202, 202, 202, 202]);
    expectError(await recover(hook, key, { since: daysAgo(1) }), 429, 'rate_limited');
  });

  it("finds another account's endpoint 404 not_found, spending nothing; an administrator may recover it", async () => {
    const { hook } = await subscribed('Owner');
    const stranger = await subscribed('Stranger');
    const since = new Date(Date.now() - HOUR).toISOString();
    for (let i = 0; i < 6; i++) expectError(await recover(hook, stranger.key, { since }), 404, 'not_found');
    expectError(await recover(hook + 1000, stranger.key, { since }), 404, 'not_found');
    const byAdmin = await recover(hook, ADMIN_KEY, { since });
    expect({ status: byAdmin.status, body: byAdmin.body }).toEqual({ status: 202, body: { queued: 0 } });
    // The stranger's budget is whole after its refusals: five recoveries of its own endpoint.
    const own: number[] = [];
    for (let i = 0; i < 5; i++) own.push((await recover(stranger.hook, stranger.key, { since })).status);
    expect(own).toEqual([202, 202, 202, 202, 202]);
  });
});
