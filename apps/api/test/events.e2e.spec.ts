import { AccountRepository, PlaceOrder, PurgeEvents, UnitOfWork } from '@petstore/application';
import type { Account } from '@petstore/domain';
import { TransactionHost } from '@petstore/infrastructure';
import { eventually } from './support/eventually';
import { StoreFixtures } from './support/store-fixtures';
import { ADMIN_KEY, TestApp, TestResponse, expectError } from './support/test-app';

/** The path and query of a list response's `Link: <…>; rel="next"`, or null. */
function nextLink(response: TestResponse, rel = 'next'): string | null {
  for (const link of (response.headers.get('link') ?? '').split(/,\s*(?=<)/)) {
    const match = /^<([^>]+)>; rel="([a-z]+)"$/.exec(link);
    if (match?.[2] === rel) return match[1];
  }
  return null;
}

interface Listed {
  id: string;
  type: string;
  data: { id: number };
  position?: string;
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
    const listed = await eventually(
      () => api.get('/events?type=order.placed', { key }),
      (response) => response.body[0]?.position !== undefined, // settled (other tests' writers may be in flight)
    );
    expect(listed.status).toBe(200);
    const order = (await api.get(`/store/orders/${orderId}`, { key })).body;
    expect(listed.body).toEqual([
      {
        id: expect.any(String),
        type: 'order.placed',
        timestamp: expect.any(String),
        data: order,
        position: expect.any(String),
      },
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

  describe('the commit-order feed (order=commit, startingAfter, endingBefore)', () => {
    /** The orders' events only: a customer's feed also has the catalogue's. */
    const ORDERS = 'type=order.placed,order.cancelled';

    /** The feed after `position` (from the start without), once `done` holds (events settle as writers end). */
    const feed = (key: string, query: string, done: (events: Listed[]) => boolean = () => true) =>
      eventually(
        () => api.get<Listed[]>(`/events?${query}`, { key }),
        (response) => response.status !== 200 || done(response.body),
      );

    it('skips no event: one committed after a later-numbered one comes after the checkpoint', async () => {
      const customer = await api.customer('Feed consumer');
      const petA = await store.pet({ quantity: 5 });
      const petB = await store.pet({ quantity: 5 });
      const first = await store.placed(customer.key, petB);
      // (with a type filter: the catalogue's events, every account's, are in a customer's feed too)
      const start = await feed(customer.key, `order=commit&${ORDERS}`, (events) => events.length === 1);
      expect(start.body.map((event) => event.data.id)).toEqual([first]);
      let checkpoint = start.body[0].position as string;

      // Transaction A places an order through the service's own use case, sends its writes, and stays open.
      let commitA!: () => void;
      const mayCommit = new Promise<void>((resolve) => (commitA = resolve));
      let written!: () => void;
      const aWritten = new Promise<void>((resolve) => (written = resolve));
      const by = (await api.app.get(AccountRepository).findById(customer.id)) as Account;
      const a = api.app.get(UnitOfWork).run(async () => {
        const order = await api.app.get(PlaceOrder).execute({ petId: petA, quantity: 1, by });
        await api.app.get(TransactionHost).query('SELECT 1'); // the held writes (the event's INSERT) go with it
        written();
        await mayCommit;
        return order.id;
      });
      await aWritten;
      // B, numbered after A, commits first.
      const b = await store.placed(customer.key, petB);
      // Newest first by number, B is listed and A is not: a checkpoint on B would pass A for good.
      const newest = (await api.get<Listed[]>(`/events?${ORDERS}`, { key: customer.key })).body;
      expect(newest.map((event) => event.data.id)).toEqual([b, first]);
      expect(newest[0].position).toBeUndefined(); // B is not settled: no position yet
      // The feed consumer: nothing after its checkpoint while A is in flight.
      const during = await api.get<Listed[]>(`/events?startingAfter=${checkpoint}&${ORDERS}`, { key: customer.key });
      expect(during.status).toBe(200);
      expect(during.body).toEqual([]);
      checkpoint = during.body.at(-1)?.position ?? checkpoint;

      commitA();
      const aOrder = await a;
      const after = await feed(customer.key, `startingAfter=${checkpoint}&${ORDERS}`, (events) => events.length === 2);
      expect(after.body.map((event) => event.data.id)).toEqual([aOrder, b]);
      expect(nextLink(after)).toBeNull(); // the end, for now: resume from the last position
    });

    it('pages forward with Link rel="next" and back with rel="prev", keeping the filters', async () => {
      const { key } = await api.customer('Feed pager');
      const petId = await store.pet({ quantity: 20 });
      const orders: number[] = [];
      for (let i = 0; i < 5; i++) orders.push(await store.placed(key, petId));
      expect((await api.delete(`/store/orders/${orders[0]}`, { key })).status).toBe(204);
      const all = await feed(key, `order=commit&limit=100&${ORDERS}`, (events) => events.length === 6);
      expect(all.body.map((event) => [event.type, event.data.id])).toEqual([
        ...orders.map((id) => ['order.placed', id]),
        ['order.cancelled', orders[0]],
      ]);
      const ids: number[] = [];
      let next: string | null = '/events?order=commit&limit=2&type=order.placed';
      let pages = 0;
      while (next) {
        const page = await api.get<Listed[]>(next, { key });
        expect(page.status).toBe(200);
        ids.push(...page.body.map((event) => event.data.id));
        next = nextLink(page);
        if (next) expect(next).toContain('type=order.placed');
        pages++;
      }
      expect(ids).toEqual(orders);
      expect(pages).toBe(3);
      // Back from the 5th: the two before it, oldest first; older ones remain (rel="prev"), newer follow (rel="next").
      const back = await api.get<Listed[]>(`/events?endingBefore=${all.body[4].position}&limit=2&${ORDERS}`, { key });
      expect(back.body.map((event) => event.data.id)).toEqual([orders[2], orders[3]]);
      const prev = nextLink(back, 'prev');
      expect(prev).toContain(`endingBefore=${all.body[2].position}`);
      const oldest = await api.get<Listed[]>(prev as string, { key });
      expect(oldest.body.map((event) => event.data.id)).toEqual([orders[0], orders[1]]);
      expect(nextLink(oldest, 'prev')).toBeNull();
      expect(nextLink(oldest)).toContain(`startingAfter=${all.body[1].position}`);
      // Each position is also on the event itself once settled.
      expect((await api.get<Listed>(`/events/${all.body[3].id}`, { key })).body.position).toBe(all.body[3].position);
    });

    it('refuses a position it did not issue, and mixed paging, with 400 naming the parameter', async () => {
      const { key } = await api.customer('Feed bad input');
      const petId = await store.pet({ quantity: 5 });
      await store.placed(key, petId);
      await store.placed(key, petId);
      const feed = await api.get<Listed[]>('/events?order=commit&limit=2', { key });
      const position = feed.body[0].position as string;
      const newest = await api.get<Listed[]>('/events?limit=1', { key });
      const listCursor = new URL(nextLink(newest) as string, 'http://x').searchParams.get('cursor') as string;
      // A position reveals nothing: no JSON, no number, the same length whatever it holds.
      for (const token of [position, feed.body[1].position as string, listCursor]) {
        expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
        expect(() => JSON.parse(Buffer.from(token, 'base64url').toString('utf8'))).toThrow();
      }
      const tampered = `${position.slice(0, 5)}${position[5] === 'A' ? 'B' : 'A'}${position.slice(6)}`;
      for (const query of [
        'startingAfter=nonsense',
        // The positions of before (base64 JSON of the transaction and seq) are no longer taken.
        `startingAfter=${Buffer.from(JSON.stringify({ x: '1', s: 1 })).toString('base64url')}`,
        `startingAfter=${tampered}`,
        // A newest-first cursor is not a position, nor a position a cursor.
        `startingAfter=${listCursor}`,
        `cursor=${position}`,
        'order=oldest',
      ]) {
        expectError(await api.get(`/events?${query}`, { key }), 400, 'validation_failed');
      }
      expect((await api.get(`/events?cursor=${listCursor}`, { key })).status).toBe(200);
      for (const [query, field] of [
        [`startingAfter=${position}&endingBefore=${position}`, 'endingBefore'],
        [`startingAfter=${position}&cursor=${Buffer.from('{"after":3}').toString('base64url')}`, 'cursor'],
        [`order=newest&endingBefore=${position}`, 'order'],
      ]) {
        const response = await api.get(`/events?${query}`, { key });
        expectError(response, 400, 'validation_failed');
        expect(response.body.details).toEqual([{ field, message: expect.any(String) }]);
      }
      expect((await api.get(`/events?startingAfter=${position}`, { key })).status).toBe(200);
    });
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
