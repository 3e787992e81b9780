import { DisableFailingWebhookEndpoints } from '@petstore/application';
import { Webhook } from 'standardwebhooks';
import { StoreFixtures } from './support/store-fixtures';
import { ADMIN_KEY, TestApp, expectError } from './support/test-app';
import { eventually, ReceivedWebhook, WebhookReceiver } from './support/webhook-receiver';

// Deliveries wait for pg-boss's polling (0.5 s).
jest.setTimeout(60_000);

/** The rotation window this service is configured with here (the default is 24 h). */
const WINDOW_SECONDS = 7200;

const verifies = (secret: string, delivery: ReceivedWebhook): boolean => {
  try {
    new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
};

const signatures = (delivery: ReceivedWebhook) => String(delivery.headers['webhook-signature']).split(' ');

describe('managing webhook endpoints: PATCH and secret rotation (HTTP, real PostgreSQL, worker on)', () => {
  let api: TestApp;
  let store: StoreFixtures;
  let receiver: WebhookReceiver;
  let path = 0;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    api = await TestApp.start({
      messaging: { worker: true },
      webhooks: { allowPrivate: true, secretRotationWindowSeconds: WINDOW_SECONDS },
    });
    store = await StoreFixtures.on(api);
  });
  afterAll(async () => {
    await store?.close();
    await api?.close();
    await receiver?.close();
  });

  const nextPath = () => `/manage-${++path}`;

  async function endpoint(key: string, events: string[] = ['order.placed']) {
    const hook = nextPath();
    const response = await api.post('/webhooks/endpoints', { key, body: { url: receiver.url + hook, events } });
    expect(response.status).toBe(201);
    return { path: hook, id: response.body.id as number, secret: response.body.secret as string };
  }

  it('changes the URL and the events: the next events go to the new URL, by the new list', async () => {
    const { key } = await api.customer('Mover');
    const hook = await endpoint(key, ['message.delivered']);
    const moved = nextPath();
    const patched = await api.patch(`/webhooks/endpoints/${hook.id}`, {
      key,
      body: { url: receiver.url + moved, events: ['order.placed', 'order.placed'] },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({
      id: hook.id,
      url: receiver.url + moved,
      events: ['order.placed'],
      createdAt: expect.any(String),
    });
    expect((await api.get(`/webhooks/endpoints/${hook.id}`, { key })).body).toEqual(patched.body);
    const orderId = await store.placed(key, await store.pet({ quantity: 1 }));
    const delivery = await receiver.nth(moved, 1);
    expect(delivery.json).toMatchObject({ type: 'order.placed', data: { id: orderId } });
    expect(verifies(hook.secret, delivery)).toBe(true); // the secret stays
    expect(receiver.to(hook.path)).toEqual([]);
    // A field left out stays as it is; an empty body changes nothing.
    const same = await api.patch(`/webhooks/endpoints/${hook.id}`, { key, body: {} });
    expect(same.body).toEqual(patched.body);
  });

  it('refuses bad input (unknown fields, null, no events), a URL as creation does; not yours is 404', async () => {
    const { key } = await api.customer('Careful');
    const hook = await endpoint(key);
    const patch = (body: unknown, as = key) => api.patch(`/webhooks/endpoints/${hook.id}`, { key: as, body });
    const unknown = await patch({ secret: 'whsec_mine' });
    expectError(unknown, 400, 'validation_failed');
    expect(unknown.body.details).toEqual([{ field: 'secret', message: 'secret is not a known field' }]);
    for (const body of [
      { url: null },
      { events: [] },
      { events: ['order.lost'] },
      { enabled: 'yes' },
      { events: null },
    ]) {
      expectError(await patch(body), 400, 'validation_failed');
    }
    expectError(await patch({ events: ['pet.status_changed'] }), 400, 'validation_failed');
    for (const url of ['https://user:pw@example.com/x', 'https://example.com:22/x', 'ftp://example.com/x']) {
      const refused = await patch({ url });
      const created = await api.post('/webhooks/endpoints', { key, body: { url, events: ['order.placed'] } });
      expectError(refused, 400, 'invalid_webhook_url');
      expect(refused.body.message).toBe(created.body.message); // one answer, whichever rule fails
    }
    const other = (await api.customer('Not the owner')).key;
    expectError(await patch({ events: ['order.completed'] }, other), 404, 'not_found');
    expectError(await api.patch('/webhooks/endpoints/999999', { key, body: {} }), 404, 'not_found');
    expect((await api.get(`/webhooks/endpoints/${hook.id}`, { key })).body.events).toEqual(['order.placed']);
    // An administrator may edit it, by the owner's rights.
    expectError(await patch({ events: ['pet.status_changed'] }, ADMIN_KEY), 400, 'validation_failed');
    const byAdmin = await patch({ events: ['order.cancelled'] }, ADMIN_KEY);
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.body.events).toEqual(['order.cancelled']);
  });

  it('enables a disabled endpoint again: its failing streak is over, it receives the next events', async () => {
    const { key } = await api.customer('Back up');
    const hook = await endpoint(key);
    await api.sql(`UPDATE webhook_endpoints SET failing_since = now() - interval '5 days 1 minute' WHERE id = $1`, [
      hook.id,
    ]);
    await api.app.get(DisableFailingWebhookEndpoints).execute();
    const disabled = await api.get(`/webhooks/endpoints/${hook.id}`, { key });
    expect(disabled.body.disabledAt).toEqual(expect.any(String));
    const petId = await store.pet({ quantity: 5 });
    await store.placed(key, petId); // not sent: the endpoint is disabled

    const enabled = await api.patch(`/webhooks/endpoints/${hook.id}`, { key, body: { enabled: true } });
    expect(enabled.status).toBe(200);
    expect(enabled.body.disabledAt).toBeUndefined();
    await api.app.get(DisableFailingWebhookEndpoints).execute();
    expect((await api.get(`/webhooks/endpoints/${hook.id}`, { key })).body.disabledAt).toBeUndefined();
    const orderId = await store.placed(key, petId);
    expect((await receiver.nth(hook.path, 1)).json.data.id).toBe(orderId);

    const paused = await api.patch(`/webhooks/endpoints/${hook.id}`, { key, body: { enabled: false } });
    expect(paused.body.disabledAt).toEqual(expect.any(String));
    await store.placed(key, petId);
    const [{ n }] = await api.sql(
      `SELECT count(*)::int AS n FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
        WHERE d.endpoint_id = $1`,
      [hook.id],
    );
    expect(n).toBe(1);
  });

  it('rotates the secret: both sign in the window, a rotation in it replaces the old, then the new only', async () => {
    const { key } = await api.customer('Rotator');
    const hook = await endpoint(key);
    const petId = await store.pet({ quantity: 10 });
    const rotate = (body?: unknown) =>
      api.post(`/webhooks/endpoints/${hook.id}/secret/rotate`, body === undefined ? { key } : { key, body });

    // No body: the configured window.
    const first = await rotate();
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+=*$/),
      expiresAt: expect.any(String),
    });
    expect(first.body.secret).not.toBe(hook.secret);
    expect(Math.abs(Date.parse(first.body.expiresAt) - Date.now() - WINDOW_SECONDS * 1000)).toBeLessThan(30_000);
    expect((await api.get(`/webhooks/endpoints/${hook.id}`, { key })).body.secret).toBeUndefined();
    await store.placed(key, petId);
    const during = await receiver.nth(hook.path, 1);
    expect(signatures(during)).toHaveLength(2);
    expect(verifies(first.body.secret, during)).toBe(true);
    expect(verifies(hook.secret, during)).toBe(true);
    expect(new Webhook(first.body.secret).verify(during.body, during.headers as Record<string, string>)).toEqual(
      during.json,
    );

    // A rotation during the window: the secret before the old one stops at once.
    const second = await rotate({ expiresInSeconds: 60 });
    expect(Math.abs(Date.parse(second.body.expiresAt) - Date.now() - 60_000)).toBeLessThan(30_000);
    await store.placed(key, petId);
    const replaced = await receiver.nth(hook.path, 2);
    expect([second.body.secret, first.body.secret, hook.secret].map((s) => verifies(s, replaced))).toEqual([
      true,
      true,
      false,
    ]);

    // After the window: the new secret only.
    const third = await rotate({ expiresInSeconds: 1 });
    await new Promise((resolve) => setTimeout(resolve, Date.parse(third.body.expiresAt) - Date.now() + 100));
    await store.placed(key, petId);
    const after = await receiver.nth(hook.path, 3);
    expect(signatures(after)).toHaveLength(1);
    expect([third.body.secret, second.body.secret].map((s) => verifies(s, after))).toEqual([true, false]);
  });

  it('refuses a window beyond the setting, unknown fields and not yours; the secret is then unchanged', async () => {
    const { key } = await api.customer('Rotation input');
    const hook = await endpoint(key);
    const rotate = (body: unknown, as = key) =>
      api.post(`/webhooks/endpoints/${hook.id}/secret/rotate`, { key: as, body });
    for (const body of [
      { expiresInSeconds: WINDOW_SECONDS + 1 },
      { expiresInSeconds: -1 },
      { expiresInSeconds: 1.5 },
      { expiresInSeconds: null },
      { secret: 'whsec_mine' },
    ]) {
      expectError(await rotate(body), 400, 'validation_failed');
    }
    expectError(await rotate({}, (await api.customer('Thief')).key), 404, 'not_found');
    const [row] = await api.sql(`SELECT secret, previous_secret FROM webhook_endpoints WHERE id = $1`, [hook.id]);
    expect(row).toEqual({ secret: hook.secret, previous_secret: null });
    const byAdmin = await rotate({ expiresInSeconds: WINDOW_SECONDS }, ADMIN_KEY);
    expect(byAdmin.status).toBe(200);
  });

  it('a rotation retried with its Idempotency-Key answers the same secret and rotates once', async () => {
    const { key } = await api.customer('Retrying');
    const hook = await endpoint(key);
    const rotate = () =>
      api.post(`/webhooks/endpoints/${hook.id}/secret/rotate`, {
        key,
        body: { expiresInSeconds: 60 },
        headers: { 'Idempotency-Key': `rotate-${hook.id}` },
      });
    const first = await rotate();
    const replay = await rotate();
    expect(first.status).toBe(200);
    expect(replay.body).toEqual(first.body);
    const [row] = await api.sql(`SELECT secret, previous_secret FROM webhook_endpoints WHERE id = $1`, [hook.id]);
    expect(row).toEqual({ secret: first.body.secret, previous_secret: hook.secret });
  });

  it('two rotations at once queue on the endpoint: the later one keeps the earlier one as its old secret', async () => {
    const { key } = await api.customer('Racing');
    const hook = await endpoint(key);
    const answers = await Promise.all(
      [1, 2].map(() => api.post(`/webhooks/endpoints/${hook.id}/secret/rotate`, { key })),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    const issued = answers.map((a) => a.body.secret as string);
    const [row] = await api.sql(`SELECT secret, previous_secret FROM webhook_endpoints WHERE id = $1`, [hook.id]);
    // Whichever committed last, the other's secret is its old one: no secret answered is lost.
    expect([row.secret, row.previous_secret].sort()).toEqual([...issued].sort());
  });
});

/**
 * Two instances on one database: A takes the API calls and runs no worker; B places the orders (caching that an
 * event type has no subscriber) and runs the only worker, so every delivery is B's.
 */
describe('a PATCHed endpoint and a rotated secret across two instances', () => {
  let a: TestApp;
  let b: TestApp;
  let store: StoreFixtures;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    a = await TestApp.start({ webhooks: { allowPrivate: true } });
    b = await TestApp.startOn(a.databaseUrl, { messaging: { worker: true }, webhooks: { allowPrivate: true } });
    store = await StoreFixtures.on(b);
  });
  afterAll(async () => {
    await store?.close();
    await b?.close();
    await a?.close();
    await receiver?.close();
  });

  it("another instance applies a PATCH's events within 1 s though it cached 'none'; sends to the new URL", async () => {
    const { key } = await a.customer('Two instances');
    const created = await a.post('/webhooks/endpoints', {
      key,
      body: { url: `${receiver.url}/before`, events: ['message.delivered'] },
    });
    const petId = await store.pet({ quantity: 1000 });
    await store.placed(key, petId); // B: no subscriber for order.placed, cached
    const patched = await a.patch(`/webhooks/endpoints/${created.body.id}`, {
      key,
      body: { url: `${receiver.url}/after`, events: ['order.placed'] },
    });
    expect(patched.status).toBe(200);
    const patchedAt = Date.now();
    let orderId: number;
    for (;;) {
      const startedAfter = Date.now() - patchedAt;
      orderId = await store.placed(key, petId);
      const [row] = await a.sql(
        `SELECT 1 FROM webhook_events WHERE type = 'order.placed' AND (body::jsonb -> 'data' ->> 'id')::bigint = $1`,
        [orderId],
      );
      if (row) break;
      if (startedAfter > 1000) throw new Error(`no event for an order placed ${startedAfter} ms after the PATCH`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const delivery = await eventually(
      () => receiver.to('/after').find((r) => r.json.data.id === orderId),
      (found) => found !== undefined,
    );
    expect(verifies(created.body.secret, delivery!)).toBe(true);
    expect(receiver.to('/before')).toEqual([]);
  });

  it("the other instance's worker signs with the secret rotated on the first, and the old one meanwhile", async () => {
    const { key } = await a.customer('Rotated elsewhere');
    const created = await a.post('/webhooks/endpoints', {
      key,
      body: { url: `${receiver.url}/rotated`, events: ['order.placed'] },
    });
    const rotated = await a.post(`/webhooks/endpoints/${created.body.id}/secret/rotate`, { key });
    expect(rotated.status).toBe(200);
    await store.placed(key, await store.pet({ quantity: 1 }));
    const delivery = await receiver.nth('/rotated', 1);
    expect(verifies(rotated.body.secret, delivery)).toBe(true);
    expect(verifies(created.body.secret, delivery)).toBe(true);
    expect(signatures(delivery)).toHaveLength(2);
  });
});
