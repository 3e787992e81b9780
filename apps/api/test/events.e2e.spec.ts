import { PurgeEvents } from '@petstore/application';
import { StoreFixtures } from './support/store-fixtures';
import { ADMIN_KEY, TestApp, TestResponse, expectError } from './support/test-app';

/** The path and query of a list response's `Link: <…>; rel="next"`, or null. */
function nextLink(response: TestResponse): string | null {
  const match = /^<([^>]+)>; rel="next"$/.exec(response.headers.get('link') ?? '');
  return match ? match[1] : null;
}

/** The event types about an account's resources, and pet.status_changed: every type but the catalogue's. */
const NOT_CATALOGUE = 'order.placed,order.completed,order.cancelled,message.delivered,pet.status_changed';

describe('the event log: GET /events (HTTP, real PostgreSQL, no webhook endpoint at all)', () => {
  let api: TestApp;
  let store: StoreFixtures;

  beforeAll(async () => {
    api = await TestApp.start();
    store = await StoreFixtures.on(api);
  });
  afterAll(async () => {
    await store?.close();
    await api?.close();
  });

  it("records an order's event with no endpoint subscribed: the webhook body and id, data as GET shows", async () => {
    const { key } = await api.customer('No subscriber');
    const petId = await store.pet({ quantity: 5 });
    const orderId = await store.placed(key, petId);
    // The catalogue's events (every account's: catalogue-events.e2e.spec.ts) left out.
    const listed = await api.get('/events?type=order.placed', { key });
    expect(listed.status).toBe(200);
    const order = (await api.get(`/store/orders/${orderId}`, { key })).body;
    expect(listed.body).toEqual([
      { id: expect.any(String), type: 'order.placed', timestamp: expect.any(String), data: order },
    ]);
    const [event] = listed.body;
    const [row] = await api.sql(`SELECT body FROM webhook_events WHERE id = $1`, [event.id]);
    expect(JSON.parse(row['body'])).toEqual({ type: event.type, timestamp: event.timestamp, data: event.data });
    expect((await api.get(`/events/${event.id}`, { key })).body).toEqual(event);
    expect((await api.get(`/events/${event.id.toUpperCase()}`, { key })).body).toEqual(event);
    const jobs = await api.sql(`SELECT 1 FROM pgboss.job WHERE name = 'webhook-fan-out' AND id = $1`, [event.id]);
    expect(jobs).toEqual([]); // nobody subscribes: no fan-out job
  });

  it("shows a customer its own events (and the catalogue's), an administrator every one, pets included", async () => {
    const alice = await api.customer('Alice');
    const bob = await api.customer('Bob');
    const petId = await store.pet({ quantity: 5 });
    const aliceOrder = await store.placed(alice.key, petId);
    const bobOrder = await store.placed(bob.key, petId);
    expect((await api.delete(`/store/orders/${bobOrder}`, { key: bob.key })).status).toBe(204);
    expect((await api.patch(`/pets/${petId}`, { key: ADMIN_KEY, body: { status: 'pending' } })).status).toBe(200);
    // The catalogue's events, which every account sees (catalogue-events.e2e.spec.ts), left out.
    const seen = async (key: string) =>
      (await api.get(`/events?limit=100&type=${NOT_CATALOGUE}`, { key })).body.map(
        (e: { type: string; data: { id: number } }) => [e.type, e.data.id],
      );
    expect(await seen(alice.key)).toEqual([['order.placed', aliceOrder]]);
    expect(await seen(bob.key)).toEqual([
      ['order.cancelled', bobOrder],
      ['order.placed', bobOrder],
    ]);
    const all = await seen(ADMIN_KEY);
    expect(all.slice(0, 4)).toEqual([
      ['pet.status_changed', petId],
      ['order.cancelled', bobOrder],
      ['order.placed', bobOrder],
      ['order.placed', aliceOrder],
    ]);
    const bobsEvents = (await api.get(`/events?type=${NOT_CATALOGUE}`, { key: bob.key })).body;
    expectError(await api.get(`/events/${bobsEvents[0].id}`, { key: alice.key }), 404, 'not_found');
    const petEvent = (await api.get('/events?type=pet.status_changed', { key: ADMIN_KEY })).body[0];
    expect(petEvent.data).toEqual(expect.objectContaining({ id: petId, status: 'pending' }));
    expectError(await api.get(`/events/${petEvent.id}`, { key: alice.key }), 404, 'not_found');
    expect((await api.get(`/events/${petEvent.id}`, { key: ADMIN_KEY })).status).toBe(200);
  });

  it('pages newest first with the Link header, keeping the filters; filters by type and time', async () => {
    const { key } = await api.customer('Pager');
    const petId = await store.pet({ quantity: 20 });
    const orders: number[] = [];
    for (let i = 0; i < 5; i++) orders.push(await store.placed(key, petId));
    expect((await api.delete(`/store/orders/${orders[0]}`, { key })).status).toBe(204);
    const ids: number[] = [];
    let next: string | null = '/events?limit=2&type=order.placed';
    let pages = 0;
    while (next) {
      const page = await api.get(next, { key });
      expect(page.status).toBe(200);
      expect(page.body.length).toBeLessThanOrEqual(2);
      for (const event of page.body) {
        expect(event.type).toBe('order.placed');
        ids.push(event.data.id);
      }
      next = nextLink(page);
      if (next) expect(next).toContain('type=order.placed');
      pages++;
    }
    expect(ids).toEqual([...orders].reverse());
    expect(pages).toBe(3);
    const both = await api.get('/events?type=order.placed,order.cancelled&limit=100', { key });
    expect(both.body).toHaveLength(6);
    const all = (await api.get('/events?limit=100', { key })).body;
    const middle = all[3].timestamp; // newest first: the 4th newest
    const after = (await api.get(`/events?createdAfter=${middle}&limit=100`, { key })).body;
    expect(after.map((e: { id: string }) => e.id)).toEqual(
      all.filter((e: { timestamp: string }) => e.timestamp >= middle).map((e: { id: string }) => e.id),
    );
    const before = (await api.get(`/events?createdBefore=${middle}&limit=100`, { key })).body;
    expect(before.map((e: { id: string }) => e.id)).toEqual(
      all.filter((e: { timestamp: string }) => e.timestamp < middle).map((e: { id: string }) => e.id),
    );
    const none = await api.get(`/events?createdAfter=2000-01-01T00:00:00Z&createdBefore=2000-01-02T00:00:00Z`, { key });
    expect(none.body).toEqual([]);
  });

  it('refuses bad input with 400 and an unknown event with 404', async () => {
    const { key } = await api.customer('Bad input');
    expectError(await api.get('/events?type=order.shipped', { key }), 400, 'validation_failed');
    expectError(await api.get('/events?createdAfter=yesterday', { key }), 400, 'validation_failed');
    expectError(await api.get('/events?createdBefore=2026-02-30T00:00:00Z', { key }), 400, 'validation_failed');
    expectError(await api.get('/events?cursor=nonsense', { key }), 400, 'validation_failed');
    expectError(await api.get('/events/not-a-uuid', { key }), 400, 'validation_failed');
    expectError(await api.get('/events/00000000-0000-4000-8000-000000000000', { key }), 404, 'not_found');
    expectError(await api.get('/events'), 401, 'unauthorized');
  });

  it('the scheduled purge deletes the events older than EVENT_RETENTION_DAYS, and nothing newer', async () => {
    const { key } = await api.customer('Old events');
    const petId = await store.pet({ quantity: 5 });
    const old = await store.placed(key, petId);
    const recent = await store.placed(key, petId);
    await api.sql(
      `UPDATE webhook_events SET created_at = now() - interval '31 days'
        WHERE (body::jsonb -> 'data' ->> 'id')::bigint = $1`,
      [old],
    );
    const { purged } = await api.app.get(PurgeEvents).execute();
    expect(purged).toBeGreaterThanOrEqual(1);
    const left = (await api.get('/events?type=order.placed', { key })).body.map(
      (e: { data: { id: number } }) => e.data.id,
    );
    expect(left).toEqual([recent]);
  });
});
