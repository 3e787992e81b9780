import { StoreFixtures } from './support/store-fixtures';
import { TestApp } from './support/test-app';

/** The bound the service promises: an endpoint created on one instance receives the others' events within this. */
const CHANGE_BOUND_MS = 1000;

/**
 * Two instances of the service on one database. Each caches, for a few seconds, whether an event
 * has any subscriber (SubscriberCache); only the endpoint-change signal can explain an instance
 * noticing a new endpoint within the bound.
 */
describe('webhook subscribers cached across two instances (one database)', () => {
  let a: TestApp;
  let b: TestApp;
  let store: StoreFixtures;

  beforeAll(async () => {
    a = await TestApp.start({ webhooks: { allowPrivate: true } });
    b = await TestApp.startOn(a.databaseUrl, { webhooks: { allowPrivate: true } });
    store = await StoreFixtures.on(b);
  });
  afterAll(async () => {
    await store?.close();
    await b?.close();
    await a?.close();
  });

  /**
   * Whether the order's `order.placed` event was queued for fan-out (its pg-boss job, whose id is the event's):
   * every event is in the log, but the job is sent only when the instance believes someone subscribes.
   */
  async function hasEvent(orderId: number): Promise<boolean> {
    const rows = await a.sql(
      `SELECT j.id AS job FROM webhook_events e LEFT JOIN pgboss.job j ON j.id = e.id AND j.name = 'webhook-fan-out'
        WHERE e.type = 'order.placed' AND (e.body::jsonb -> 'data' ->> 'id')::bigint = $1`,
      [orderId],
    );
    expect(rows).toHaveLength(1); // the event itself is always written
    return rows[0].job !== null;
  }

  function createEndpoint(api: TestApp, key: string) {
    // Nothing listens there (port 1024 or above: the port rule of webhook URLs); only the subscription matters.
    const body = { url: 'http://127.0.0.1:1025/hook', events: ['order.placed'] };
    return api.post('/webhooks/endpoints', { key, body });
  }

  it("an endpoint created on one instance gets the other's orders within 1 s, though it cached 'none'", async () => {
    const { key } = await a.customer('Subscriber');
    const petId = await store.pet({ quantity: 1000 });
    // Instance B queues no fan-out (no subscriber) and caches that answer; the events are logged all the same.
    expect(await hasEvent(await store.placed(key, petId))).toBe(false);
    expect(await hasEvent(await store.placed(key, petId))).toBe(false);
    expect((await createEndpoint(a, key)).status).toBe(201);
    const createdAt = Date.now();
    for (;;) {
      const startedAfter = Date.now() - createdAt;
      if (await hasEvent(await store.placed(key, petId))) break;
      if (startedAfter > CHANGE_BOUND_MS) throw new Error(`no event for an order placed ${startedAfter} ms after`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });

  it("an endpoint created on the instance that cached 'none' receives its very next order", async () => {
    const { key } = await b.customer('Own subscriber');
    const petId = await store.pet({ quantity: 1000 });
    expect(await hasEvent(await store.placed(key, petId))).toBe(false);
    expect((await createEndpoint(b, key)).status).toBe(201);
    expect(await hasEvent(await store.placed(key, petId))).toBe(true);
  });
});
