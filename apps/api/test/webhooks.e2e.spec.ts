import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import {
  AccountRepository,
  Clock,
  DisableFailingWebhookEndpoints,
  ExpireHeldOrders,
  GiveUpWebhookDelivery,
  PlaceOrder,
  UnitOfWork,
} from '@petstore/application';
import type { Account } from '@petstore/domain';
import { HttpWebhookSender, WebhookNetworkSettings } from '@petstore/infrastructure';
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '../src/config/app-config';
import { StoreFixtures } from './support/store-fixtures';
import { ADMIN_KEY, TestApp, expectError } from './support/test-app';
import { eventually, WebhookReceiver } from './support/webhook-receiver';

// Deliveries wait for pg-boss's polling (0.5 s); retries here wait 100–110 ms (WEBHOOK_RETRY_DELAYS_MS).
jest.setTimeout(60_000);

const ALL_CUSTOMER_EVENTS = ['order.placed', 'order.completed', 'order.cancelled', 'message.delivered'];

describe('webhooks (HTTP, real PostgreSQL, worker on, a local receiver)', () => {
  let api: TestApp;
  let store: StoreFixtures;
  let receiver: WebhookReceiver;
  let path = 0;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    api = await TestApp.start({
      messaging: { worker: true },
      webhooks: { allowPrivate: true, retryDelaysMs: [100, 100, 100] },
    });
    store = await StoreFixtures.on(api);
  });
  afterAll(async () => {
    await store?.close();
    await api?.close();
    await receiver?.close();
  });

  /** An endpoint of `key` on its own path of the receiver. */
  async function endpoint(key: string, events: string[] = ALL_CUSTOMER_EVENTS) {
    const hook = `/hook-${++path}`;
    const response = await api.post('/webhooks/endpoints', { key, body: { url: receiver.url + hook, events } });
    expect(response.status).toBe(201);
    return { path: hook, id: response.body.id as number, secret: response.body.secret as string };
  }

  it('creates an endpoint: 201 with the secret (whsec_ + base64 of 24+ bytes), shown only then', async () => {
    const { key } = await api.customer('Hook owner');
    const url = `${receiver.url}/created`;
    const created = await api.post('/webhooks/endpoints', { key, body: { url, events: ['order.placed'] } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(Number),
      url,
      events: ['order.placed'],
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+=*$/),
      createdAt: expect.any(String),
    });
    expect(Buffer.from(created.body.secret.slice(6), 'base64').length).toBeGreaterThanOrEqual(24);
    expect(created.headers.get('location')).toBe(`/webhooks/endpoints/${created.body.id}`);
    const got = await api.get(`/webhooks/endpoints/${created.body.id}`, { key });
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ id: created.body.id, url, events: ['order.placed'], createdAt: created.body.createdAt });
    const list = await api.get('/webhooks/endpoints', { key });
    expect(list.body).toEqual([got.body]);
    const other = (await api.customer('Someone else')).key;
    expectError(await api.get(`/webhooks/endpoints/${created.body.id}`, { key: other }), 404, 'not_found');
    expect((await api.get('/webhooks/endpoints', { key: other })).body).toEqual([]);
    expectError(await api.delete(`/webhooks/endpoints/${created.body.id}`, { key: other }), 404, 'not_found');
    expect((await api.delete(`/webhooks/endpoints/${created.body.id}`, { key })).status).toBe(204);
    expectError(await api.get(`/webhooks/endpoints/${created.body.id}`, { key }), 404, 'not_found');
  });

  it("refuses bad input with 400: no events, an unknown event, a customer's pet.status_changed, no URL", async () => {
    const { key } = await api.customer('Bad input');
    const url = `${receiver.url}/x`;
    expectError(await api.post('/webhooks/endpoints', { key, body: { url, events: [] } }), 400, 'validation_failed');
    expectError(
      await api.post('/webhooks/endpoints', { key, body: { url, events: ['order.lost'] } }),
      400,
      'validation_failed',
    );
    const petEvents = { url, events: ['pet.status_changed'] };
    expectError(await api.post('/webhooks/endpoints', { key, body: petEvents }), 400, 'validation_failed');
    expect((await api.post('/webhooks/endpoints', { key: ADMIN_KEY, body: petEvents })).status).toBe(201);
    const notUrl = { url: 'not a url', events: ['order.placed'] };
    expectError(await api.post('/webhooks/endpoints', { key, body: notUrl }), 400, 'invalid_webhook_url');
    expectError(
      await api.post('/webhooks/endpoints', { key, body: { events: ['order.placed'] } }),
      400,
      'validation_failed',
    );
  });

  it('allows at most 10 endpoints per account, also under 15 concurrent requests (409 beyond)', async () => {
    const { key } = await api.customer('Many hooks');
    const body = (i: number) => ({ url: `${receiver.url}/many-${i}`, events: ['order.placed'] });
    const responses = await Promise.all(
      Array.from({ length: 15 }, (_, i) => api.post('/webhooks/endpoints', { key, body: body(i) })),
    );
    expect(responses.filter((r) => r.status === 201)).toHaveLength(10);
    for (const refused of responses.filter((r) => r.status !== 201)) expectError(refused, 409, 'too_many_endpoints');
    const [count] =
      await api.sql(`SELECT count(*)::int AS n FROM webhook_endpoints e JOIN accounts a ON a.id = e.owner_id
      WHERE a.name = 'Many hooks'`);
    expect(count.n).toBe(10);
  });

  it('signs each delivery so that standardwebhooks verifies it; data is the order as the API returns it', async () => {
    const customer = await api.customer('Signed');
    const hook = await endpoint(customer.key, ['order.placed']);
    const petId = await store.pet({ quantity: 5 });
    const orderId = await store.placed(customer.key, petId, 2);
    const [delivery] = await eventually(
      () => receiver.to(hook.path),
      (r) => r.length === 1,
    );
    expect(delivery.headers['content-type']).toBe('application/json');
    const verified = new Webhook(hook.secret).verify(delivery.body, delivery.headers as Record<string, string>);
    expect(verified).toEqual(delivery.json);
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(
        delivery.body,
        delivery.headers as Record<string, string>,
      ),
    ).toThrow();
    const order = await api.get(`/store/orders/${orderId}`, { key: customer.key });
    // With the event's position in the commit-order feed: the one GET /events lists it with.
    const logged = await api.get(`/events/${delivery.headers['webhook-id']}`, { key: customer.key });
    expect(logged.body.position).toEqual(expect.any(String));
    const { position } = logged.body;
    expect(delivery.json).toEqual({ type: 'order.placed', timestamp: expect.any(String), data: order.body, position });
    expect(new Date(delivery.json.timestamp).toISOString()).toBe(delivery.json.timestamp);
    const seconds = Number(delivery.headers['webhook-timestamp']);
    expect(Math.abs(seconds - Date.now() / 1000)).toBeLessThan(60);
    const [row] = await api.sql(`SELECT id FROM webhook_events WHERE id = $1`, [delivery.headers['webhook-id']]);
    expect(row).toBeDefined();
  });

  it('retries a receiver that fails twice: three attempts with the same webhook-id, then delivered', async () => {
    const customer = await api.customer('Flaky');
    const hook = await endpoint(customer.key, ['order.placed']);
    let calls = 0;
    const previous = receiver.answer;
    receiver.answer = (request) => (request.path === hook.path ? (++calls <= 2 ? 500 : 204) : previous(request));
    try {
      await store.placed(customer.key, await store.pet({ quantity: 1 }));
      const attempts = await eventually(
        () => receiver.to(hook.path),
        (r) => r.length === 3,
      );
      expect(new Set(attempts.map((a) => a.headers['webhook-id'])).size).toBe(1);
      expect(new Set(attempts.map((a) => a.body)).size).toBe(1);
      for (const attempt of attempts) {
        expect(new Webhook(hook.secret).verify(attempt.body, attempt.headers as Record<string, string>)).toBeTruthy();
      }
      const deliveries = await eventually(
        async () => (await api.get(`/webhooks/endpoints/${hook.id}/deliveries`, { key: customer.key })).body,
        (list) => list[0]?.status === 'delivered',
      );
      expect(deliveries).toEqual([
        expect.objectContaining({
          eventId: attempts[0].headers['webhook-id'],
          type: 'order.placed',
          attempts: 3,
          lastStatusCode: 204,
        }),
      ]);
      expect(deliveries[0].nextAttemptAt).toBeUndefined();
    } finally {
      receiver.answer = previous;
    }
  });

  it('retries a failed delivery by hand once the receiver is back: same webhook-id; pending is a 409', async () => {
    const customer = await api.customer('Catching up');
    const hook = await endpoint(customer.key, ['order.placed']);
    const previous = receiver.answer;
    const previousHold = receiver.hold;
    let up = false;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    receiver.answer = (request) => (request.path === hook.path ? (up ? 200 : 503) : previous(request));
    // The first attempt waits for the test: the delivery is pending meanwhile.
    receiver.hold = (request) =>
      request.path === hook.path && receiver.to(hook.path).length === 1 ? held : previousHold(request);
    const retry = (id: number, key = customer.key) =>
      api.post(`/webhooks/endpoints/${hook.id}/deliveries/${id}/retry`, { key });
    try {
      await store.placed(customer.key, await store.pet({ quantity: 1 }));
      await eventually(
        () => receiver.to(hook.path),
        (r) => r.length === 1,
      );
      const [pending] = (await api.get(`/webhooks/endpoints/${hook.id}/deliveries`, { key: customer.key })).body;
      expect(pending.status).toBe('pending');
      expectError(await retry(pending.id), 409, 'delivery_pending');
      release();
      const [failed] = await eventually(
        async () => (await api.get(`/webhooks/endpoints/${hook.id}/deliveries`, { key: customer.key })).body,
        (list) => list[0]?.status === 'failed',
      );
      expect(failed).toMatchObject({ id: pending.id, attempts: 4, lastStatusCode: 503 });
      const other = await api.customer('Not the owner');
      expectError(await retry(failed.id, other.key), 404, 'not_found');
      expectError(await retry(failed.id + 1000), 404, 'not_found');
      expectError(
        await api.post(`/webhooks/endpoints/${hook.id}/deliveries/x/retry`, { key: customer.key }),
        400,
        'validation_failed',
      );
      up = true;
      // Two at once: one requeues it, the other finds it pending.
      const answers = await Promise.all([retry(failed.id), retry(failed.id)]);
      expect(answers.map((a) => a.status).sort()).toEqual([202, 409]);
      const accepted = answers.find((a) => a.status === 202);
      expect(accepted?.body).toMatchObject({ id: failed.id, status: 'pending', attempts: 4 });
      const [delivered] = await eventually(
        async () => (await api.get(`/webhooks/endpoints/${hook.id}/deliveries`, { key: customer.key })).body,
        (list) => list[0]?.status === 'delivered',
      );
      expect(delivered).toMatchObject({ id: failed.id, attempts: 5, lastStatusCode: 200 });
      const received = receiver.to(hook.path);
      expect(received).toHaveLength(5);
      expect(new Set(received.map((r) => r.headers['webhook-id'])).size).toBe(1);
      expect(new Set(received.map((r) => r.body)).size).toBe(1);
      // A delivered one may be sent again (the receiver lost it): an administrator may too.
      expect((await retry(failed.id, ADMIN_KEY)).status).toBe(202);
      await eventually(
        () => receiver.to(hook.path),
        (r) => r.length === 6,
      );
    } finally {
      release();
      receiver.answer = previous;
      receiver.hold = previousHold;
    }
  });

  it('gives up after the last retry (failed) and disables an endpoint failing for 5 days', async () => {
    const customer = await api.customer('Down');
    const hook = await endpoint(customer.key, ['order.placed']);
    const previous = receiver.answer;
    receiver.answer = (request) => (request.path === hook.path ? 503 : previous(request));
    try {
      await store.placed(customer.key, await store.pet({ quantity: 1 }));
      const deliveries = await eventually(
        async () => (await api.get(`/webhooks/endpoints/${hook.id}/deliveries`, { key: customer.key })).body,
        (list) => list[0]?.status === 'failed',
      );
      // WEBHOOK_RETRY_DELAYS_MS has three delays here: four attempts in all.
      expect(deliveries[0]).toEqual(expect.objectContaining({ attempts: 4, lastStatusCode: 503, status: 'failed' }));
      expect(receiver.to(hook.path)).toHaveLength(4);
    } finally {
      receiver.answer = previous;
    }
    await api.sql(`UPDATE webhook_endpoints SET failing_since = now() - interval '5 days 1 minute' WHERE id = $1`, [
      hook.id,
    ]);
    const result = await api.app.get(DisableFailingWebhookEndpoints).execute();
    expect(result.disabled).toBeGreaterThanOrEqual(1);
    const got = await api.get(`/webhooks/endpoints/${hook.id}`, { key: customer.key });
    expect(got.body.disabledAt).toEqual(expect.any(String));
  });

  it('sends nothing for an order whose transaction rolled back', async () => {
    const customer = await api.customer('Rolled back');
    const hook = await endpoint(customer.key, ['order.placed']);
    const petId = await store.pet({ quantity: 5 });
    const uow = api.app.get(UnitOfWork);
    const placeOrder = api.app.get(PlaceOrder);
    const by = (await api.app.get(AccountRepository).findById(customer.id)) as Account;
    await expect(
      uow.run(async () => {
        await placeOrder.execute({ petId, quantity: 1, by });
        throw new Error('rolled back on purpose');
      }),
    ).rejects.toThrow('rolled back on purpose');
    const committed = await store.placed(customer.key, petId, 1);
    const received = await eventually(
      () => receiver.to(hook.path),
      (r) => r.length >= 1,
    );
    // Give the worker time to show a stray event, should one exist: a ping after the order.
    await api.post(`/webhooks/endpoints/${hook.id}/test`, { key: customer.key });
    await eventually(
      () => receiver.to(hook.path),
      (r) => r.some((x) => x.json.type === 'ping'),
    );
    expect(
      receiver
        .to(hook.path)
        .filter((r) => r.json.type === 'order.placed')
        .map((r) => r.json.data.id),
    ).toEqual([committed]);
    expect(received[0].json.data.id).toBe(committed);
    const [events] = await api.sql(
      `SELECT count(*)::int AS n FROM webhook_events WHERE type = 'order.placed'
      AND (body::jsonb -> 'data' ->> 'petId')::bigint = $1`,
      [petId],
    );
    expect(events.n).toBe(1);
  });

  it("sends an account's events to its own endpoints only; an administrator gets every order", async () => {
    const alice = await api.customer('Alice');
    const bob = await api.customer('Bob');
    const aliceHook = await endpoint(alice.key, ['order.placed']);
    const bobHook = await endpoint(bob.key, ['order.placed']);
    const adminHook = await endpoint(ADMIN_KEY, ['order.placed']);
    const petId = await store.pet({ quantity: 5 });
    const aliceOrder = await store.placed(alice.key, petId);
    const bobOrder = await store.placed(bob.key, petId);
    await eventually(
      () => receiver.to(bobHook.path),
      (r) => r.length === 1,
    );
    await eventually(
      () => receiver.to(aliceHook.path),
      (r) => r.length === 1,
    );
    const adminGot = await eventually(
      () => receiver.to(adminHook.path),
      (r) => r.length === 2,
    );
    expect(receiver.to(aliceHook.path).map((r) => r.json.data.id)).toEqual([aliceOrder]);
    expect(receiver.to(bobHook.path).map((r) => r.json.data.id)).toEqual([bobOrder]);
    expect(adminGot.map((r) => r.json.data.id).sort()).toEqual([aliceOrder, bobOrder].sort());
  });

  it("reports completion, cancellation, a pet's status change and a delivered message", async () => {
    const customer = await api.customer('Lifecycle');
    const hook = await endpoint(customer.key);
    const adminHook = await endpoint(ADMIN_KEY, ['pet.status_changed']);
    const petId = await store.pet({ quantity: 5 });
    const first = await store.placed(customer.key, petId);
    const second = await store.placed(customer.key, petId);
    expect((await api.patch(`/store/orders/${first}`, { key: ADMIN_KEY, body: { complete: true } })).status).toBe(200);
    expect((await api.delete(`/store/orders/${second}`, { key: customer.key })).status).toBe(204);
    expect((await api.post('/messages', { key: customer.key, body: { message: 'hello' } })).status).toBe(202);
    const got = await eventually(
      () => receiver.to(hook.path),
      (r) => r.length === 5,
    );
    const byType = (type: string) => got.filter((r) => r.json.type === type).map((r) => r.json.data);
    expect(
      byType('order.placed')
        .map((o) => o.id)
        .sort(),
    ).toEqual([first, second].sort());
    expect(byType('order.completed')).toEqual([expect.objectContaining({ id: first, complete: true })]);
    expect(byType('order.cancelled')).toEqual([expect.objectContaining({ id: second, complete: false })]);
    expect(byType('message.delivered')).toEqual([expect.objectContaining({ message: 'hello', status: 'delivered' })]);
    expect((await api.patch(`/pets/${petId}`, { key: ADMIN_KEY, body: { status: 'pending' } })).status).toBe(200);
    expect((await api.patch(`/pets/${petId}`, { key: ADMIN_KEY, body: { name: 'Renamed' } })).status).toBe(200);
    const pets = await eventually(
      () => receiver.to(adminHook.path),
      (r) => r.length >= 1,
    );
    const pet = await api.get(`/pets?ids=${petId}`, { key: ADMIN_KEY });
    // The pet as it was after the status change: renamed since, one version later.
    expect(pets[0].json).toEqual({
      type: 'pet.status_changed',
      timestamp: expect.any(String),
      data: { ...pet.body[0], name: pets[0].json.data.name, version: pet.body[0].version - 1 },
      position: expect.any(String),
    });
    expect(pets[0].json.data.status).toBe('pending');
  });

  it("reports the pet status changes orders make, and the service's cancellation of an expired hold", async () => {
    const customer = await api.customer('Order-driven');
    const hook = await endpoint(customer.key, ['order.cancelled']);
    const adminHook = await endpoint(ADMIN_KEY, ['pet.status_changed']);
    const petId = await store.pet({ quantity: 2 });
    const orderId = await store.placed(customer.key, petId, 2); // the last units: the pet becomes pending
    const later = new Date(Date.now() + (loadConfig({}).ordering.orderHoldMinutes + 1) * 60_000);
    jest.spyOn(api.app.get(Clock), 'now').mockReturnValue(later);
    try {
      await api.app.get(ExpireHeldOrders).execute(); // the units go back: the pet is available again
    } finally {
      jest.restoreAllMocks();
    }
    const statuses = await eventually(
      () =>
        receiver
          .to(adminHook.path)
          .filter((e) => e.json.data.id === petId)
          .map((e) => e.json.data.status as string),
      (r) => r.length >= 2,
    );
    expect(statuses.sort()).toEqual(['available', 'pending']);
    const cancelled = await eventually(
      () => receiver.to(hook.path),
      (r) => r.length >= 1,
    );
    expect(cancelled.map((r) => r.json)).toEqual([
      expect.objectContaining({ type: 'order.cancelled', data: expect.objectContaining({ id: orderId }) }),
    ]);
  });

  it('holds no transaction and no row lock while the receiver takes its time', async () => {
    const customer = await api.customer('Slow receiver');
    const hook = await endpoint(customer.key, ['order.placed']);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let entered = false;
    const previous = receiver.answer;
    let enteredAt = new Date();
    receiver.answer = (request) => {
      if (request.path === hook.path) [entered, enteredAt] = [true, new Date()];
      return previous(request);
    };
    const slow = receiver.hold;
    receiver.hold = (request) => (request.path === hook.path ? held : Promise.resolve());
    try {
      await store.placed(customer.key, await store.pet({ quantity: 1 }));
      await eventually(
        () => entered,
        (value) => value,
      );
      // The attempt is in flight: its rows can be locked at once, and no session of the app is in a transaction.
      const locked = await api.sql(
        `SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.endpoint_id = $1 FOR UPDATE NOWAIT`,
        [hook.id],
      );
      expect(locked).toHaveLength(1);
      // A transaction open across the call would have begun before the receiver saw the request (other
      // workers' short transactions, begun since, may be open for a moment: they do not count).
      const open = await api.sql(
        `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND xact_start < $1 AND pid <> pg_backend_pid()`,
        [enteredAt],
      );
      expect(open).toEqual([{ n: 0 }]);
    } finally {
      release();
      receiver.answer = previous;
      receiver.hold = slow;
    }
    await eventually(
      async () => (await api.get(`/webhooks/endpoints/${hook.id}/deliveries`, { key: customer.key })).body,
      (list) => list[0]?.status === 'delivered',
    );
  });

  it('fails a delivery the queue gives up; an attempt still in flight then records nothing', async () => {
    const customer = await api.customer('Given up');
    const hook = await endpoint(customer.key, ['order.placed']);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow = receiver.hold;
    receiver.hold = (request) => (request.path === hook.path ? held : slow(request));
    try {
      await store.placed(customer.key, await store.pet({ quantity: 1 }));
      await eventually(
        () => receiver.to(hook.path),
        (r) => r.length === 1,
      );
      const [{ id }] = await api.sql(`SELECT id::int AS id FROM webhook_deliveries WHERE endpoint_id = $1`, [hook.id]);
      const giveUp = api.app.get(GiveUpWebhookDelivery);
      expect(await giveUp.execute(id)).toBe(true);
      expect(await giveUp.execute(id)).toBe(false);
    } finally {
      release();
      receiver.hold = slow;
    }
    // The held attempt answered 200 after the give-up; once its job completed, the delivery is as the give-up left it.
    const [{ id }] = await api.sql(`SELECT id::int AS id FROM webhook_deliveries WHERE endpoint_id = $1`, [hook.id]);
    await eventually(
      () =>
        api.sql(`SELECT state FROM pgboss.job WHERE name = 'webhook-delivery' AND (data->>'deliveryId')::int = $1`, [
          id,
        ]),
      (jobs) => jobs.length === 1 && jobs[0].state === 'completed',
    );
    const [row] = await api.sql(`SELECT status, attempts, last_error FROM webhook_deliveries WHERE id = $1`, [id]);
    expect(row).toEqual({ status: 'failed', attempts: 0, last_error: 'given_up' });
  });

  it('sends a ping on POST /webhooks/endpoints/{id}/test and lists deliveries newest first, paged', async () => {
    const customer = await api.customer('Pinger');
    const hook = await endpoint(customer.key, ['order.placed']);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const ping = await api.post(`/webhooks/endpoints/${hook.id}/test`, { key: customer.key });
      expect(ping.status).toBe(202);
      ids.push(ping.body.eventId);
    }
    await eventually(
      () => receiver.to(hook.path),
      (r) => r.length === 3,
    );
    expect(
      receiver
        .to(hook.path)
        .map((r) => r.headers['webhook-id'])
        .sort(),
    ).toEqual([...ids].sort());
    const first = await api.get(`/webhooks/endpoints/${hook.id}/deliveries?limit=2`, { key: customer.key });
    const link = /^<([^>]+)>; rel="next"$/.exec(first.headers.get('link') ?? '');
    expect(link).not.toBeNull();
    const second = await api.get((link as RegExpExecArray)[1], { key: customer.key });
    const all = [...first.body, ...second.body];
    expect(all.map((d) => d.eventId).sort()).toEqual([...ids].sort());
    expect(all.map((d) => d.id)).toEqual(all.map((d) => d.id).sort((a, b) => b - a));
    expect(all.map((d) => d.type)).toEqual(['ping', 'ping', 'ping']);
    expect(second.headers.get('link')).toBeNull();
    const other = await api.customer('Not the owner');
    expectError(await api.post(`/webhooks/endpoints/${hook.id}/test`, { key: other.key }), 404, 'not_found');
    expectError(await api.get(`/webhooks/endpoints/${hook.id}/deliveries`, { key: other.key }), 404, 'not_found');
  });
  it('sends a ping once, never retried, and recorded with a category, not the error text', async () => {
    const customer = await api.customer('Failing pinger');
    const hook = await endpoint(customer.key, ['order.placed']);
    receiver.answer = (request) => (request.path === hook.path ? 503 : 200);
    try {
      const ping = await api.post(`/webhooks/endpoints/${hook.id}/test`, { key: customer.key });
      expect(ping.status).toBe(202);
      const [delivery] = await eventually(
        async () => (await api.get(`/webhooks/endpoints/${hook.id}/deliveries`, { key: customer.key })).body,
        (d) => d.length === 1 && d[0].status !== 'pending',
      );
      expect(delivery).toMatchObject({ status: 'failed', attempts: 1, lastStatusCode: 503, lastError: 'http_status' });
      // The retry delays here are 100 ms: a retried ping would have arrived again by now.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(receiver.to(hook.path)).toHaveLength(1);
    } finally {
      receiver.answer = () => 200;
    }
  });
});

describe('webhook URLs without WEBHOOKS_ALLOW_PRIVATE', () => {
  let api: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    api = await TestApp.start({ webhooks: { allowPrivate: false } });
  });
  afterAll(async () => {
    await api?.close();
    await receiver?.close();
  });

  // One URL of each kind (scheme, private IPv4, IPv6 embedding one, host name, credentials, port): every kind the
  // policy refuses is listed in libs/infrastructure/src/webhook/webhook-http.spec.ts (DnsWebhookUrlPolicy); here,
  // what HTTP shows: the 400, its code and the one message.
  it.each([
    'http://example.com/hook',
    'https://10.1.2.3/hook',
    'https://[::127.0.0.1]/hook',
    'https://[2001:0:7f00:1::]/hook',
    'https://localhost/hook',
    'https://user:pass@example.com/hook',
    'https://example.com:22/hook',
  ])('refuses %s with 400 invalid_webhook_url, one message for all', async (url) => {
    const { key } = await api.customer('Private');
    const response = await api.post('/webhooks/endpoints', { key, body: { url, events: ['order.placed'] } });
    expectError(response, 400, 'invalid_webhook_url');
    expect(response.body.message).toBe(
      'url refused: the URL cannot receive webhooks: it must be https://, without credentials, on port 443 or ' +
        '1024-65535, and its host must resolve only to public addresses.',
    );
  });

  it('fails an attempt the receiver does not answer within the time allowed', async () => {
    const silent = createServer(() => undefined); // takes the request, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const sender = new HttpWebhookSender(new WebhookNetworkSettings(true));
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`;
      const secret = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
      const response = await sender.send({ url, eventId: 'e', body: '{}', secrets: [secret], timeoutMs: 300 });
      expect(response).toEqual({ statusCode: null, error: 'timeout' });
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('refuses at connect time too: a name that resolves to a private address is never connected to', async () => {
    const sender = new HttpWebhookSender(new WebhookNetworkSettings(false));
    const port = new URL(receiver.url).port;
    const secret = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
    for (const [url, category] of [
      [`https://localhost:${port}/x`, 'forbidden_address'],
      [`https://127.0.0.1:${port}/x`, 'forbidden_address'],
      [`http://localhost:${port}/x`, 'invalid_url'],
    ]) {
      const response = await sender.send({ url, eventId: 'e', body: '{}', secrets: [secret], timeoutMs: 2_000 });
      expect(response).toEqual({ statusCode: null, error: category });
    }
    expect(receiver.received).toHaveLength(0);
    const allowed = new HttpWebhookSender(new WebhookNetworkSettings(true));
    const response = await allowed.send({
      url: `http://localhost:${port}/x`,
      eventId: 'e',
      body: '{}',
      secrets: [secret],
      timeoutMs: 2_000,
    });
    expect(response).toEqual({ statusCode: 200, error: null });
    expect(receiver.received).toHaveLength(1);
  });
});

describe('webhooks with WEBHOOKS_DELIVERY=off (a restored copy of the database)', () => {
  let api: TestApp;
  let store: StoreFixtures;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    api = await TestApp.start({
      messaging: { worker: true },
      webhooks: { allowPrivate: true, delivery: 'off', retryDelaysMs: [100, 100, 100] },
    });
    store = await StoreFixtures.on(api);
  });
  afterAll(async () => {
    await store?.close();
    await api?.close();
    await receiver?.close();
  });

  it('sends nothing to the endpoints it holds, and keeps their deliveries queued; the API works as ever', async () => {
    const customer = await api.customer('Restored');
    const url = `${receiver.url}/restored`;
    const hook = await api.post('/webhooks/endpoints', { key: customer.key, body: { url, events: ['order.placed'] } });
    expect(hook.status).toBe(201);
    const petId = await store.pet({ quantity: 2 });
    expect((await store.order(customer.key, { petId, quantity: 1 })).status).toBe(201);
    // A ping would go to nobody: refused (webhooks-delivery-off.e2e.spec.ts has the retries and the start-up line).
    expectError(
      await api.post(`/webhooks/endpoints/${hook.body.id}/test`, { key: customer.key }),
      409,
      'webhook_delivery_off',
    );
    // Twice the worker's polling interval and more: a running worker would have delivered the order's by now.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(receiver.to('/restored')).toHaveLength(0);
    const events = await api.get('/events', { key: customer.key });
    expect(events.body.map((event: { type: string }) => event.type)).toContain('order.placed');
  });
});
