import { Clock, ExpireHeldOrders } from '@petstore/application';
import { Client } from 'pg';
import { loadConfig } from '../src/config/app-config';
import { StoreFixtures } from './support/store-fixtures';
import { ADMIN_KEY, expectError, TestApp, TestResponse } from './support/test-app';

const DEFAULTS = loadConfig({}).ordering;

async function eventually(condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Stock hoarding: the per-customer hold limit (MAX_OPEN_UNITS_PER_CUSTOMER) under real concurrent
 * requests, and the order-hold expiry (ORDER_HOLD_MINUTES) with the app's clock set by the test.
 */
describe('order holds (HTTP, real PostgreSQL)', () => {
  let api: TestApp;
  let store: StoreFixtures;

  beforeAll(async () => {
    // The documented defaults, which the test helper turns off for the other tests.
    api = await TestApp.start({
      ordering: { maxOpenUnitsPerCustomer: DEFAULTS.maxOpenUnitsPerCustomer, orderHoldMinutes: 60 },
    });
    store = await StoreFixtures.on(api);
  });
  afterAll(async () => {
    await store.close();
    await api.close();
  });
  afterEach(() => jest.restoreAllMocks());

  const openUnitsOf = async (ownerId: number): Promise<number> => {
    const { rows } = await store.db.query(
      "SELECT coalesce(sum(quantity), 0)::int AS units FROM orders WHERE owner_id = $1 AND status = 'placed'",
      [ownerId],
    );
    return rows[0].units;
  };

  describe('MAX_OPEN_UNITS_PER_CUSTOMER', () => {
    it('defaults to 100 units', () => {
      expect(DEFAULTS.maxOpenUnitsPerCustomer).toBe(100);
    });

    it('20 concurrent 7-unit orders of one customer: exactly the 14 within 100 units succeed', async () => {
      const petId = await store.pet({ quantity: 1000 });
      const hoarder = await api.customer('Hoarder');
      const responses = await Promise.all(
        Array.from({ length: 20 }, () => store.order(hoarder.key, { petId, quantity: 7 })),
      );
      const created = responses.filter((r) => r.status === 201);
      const refused = responses.filter((r) => r.status !== 201);
      expect(created).toHaveLength(14);
      expect(refused).toHaveLength(6);
      for (const response of refused) expectError(response, 409, 'hold_limit_reached');
      expect(await openUnitsOf(hoarder.id)).toBe(98);
      expect(await store.stock(petId)).toEqual({ quantity: 1000 - 98, status: 'available' });
    });

    it('concurrent orders of one customer for different pets share one limit', async () => {
      const pets = await Promise.all(Array.from({ length: 4 }, () => store.pet({ quantity: 100 })));
      const customer = await api.customer('Spreader');
      const responses = await Promise.all(
        Array.from({ length: 20 }, (_, i) => store.order(customer.key, { petId: pets[i % pets.length], quantity: 10 })),
      );
      expect(responses.filter((r) => r.status === 201)).toHaveLength(10);
      const refused = responses.filter((r) => r.status !== 201);
      for (const response of refused) expectError(response, 409, 'hold_limit_reached');
      expect(await openUnitsOf(customer.id)).toBe(100);
    });

    it('counts open orders only: completed and cancelled ones free their units; each customer its own', async () => {
      const petId = await store.pet({ quantity: 1000 });
      const alice = await api.customer('Alice');
      const bob = await api.customer('Bob');
      const first = await store.placed(alice.key, petId, 60);
      const second = await store.placed(alice.key, petId, 40);
      expectError(await store.order(alice.key, { petId, quantity: 1 }), 409, 'hold_limit_reached');
      expect((await store.order(bob.key, { petId, quantity: 100 })).status).toBe(201);

      const completed = await api.patch(`/store/orders/${first}`, { key: ADMIN_KEY, body: { complete: true } });
      expect(completed.status).toBe(200);
      expect((await store.order(alice.key, { petId, quantity: 60 })).status).toBe(201);
      expectError(await store.order(alice.key, { petId, quantity: 1 }), 409, 'hold_limit_reached');
      expect((await api.delete(`/store/orders/${second}`, { key: alice.key })).status).toBe(204);
      expect((await store.order(alice.key, { petId, quantity: 40 })).status).toBe(201);
    });

    it('refuses bad input as 400 before the limit, and leaves nothing behind a refusal', async () => {
      const petId = await store.pet({ quantity: 1000 });
      const customer = await api.customer('Full');
      await store.placed(customer.key, petId, 100);
      expectError(await store.order(customer.key, { petId, quantity: 0 }), 400, 'validation_failed');
      const before = await store.stock(petId);
      expectError(await store.order(customer.key, { petId, quantity: 5 }), 409, 'hold_limit_reached');
      expect(await store.stock(petId)).toEqual(before);
      expect(await store.ordersOf(petId)).toEqual(expect.objectContaining({ open: 1, openUnits: 100 }));
    });

    it('does not apply to administrators', async () => {
      const petId = await store.pet({ quantity: 1000 });
      const responses: TestResponse[] = [];
      for (let i = 0; i < 3; i++) responses.push(await store.order(ADMIN_KEY, { petId, quantity: 100 }));
      expect(responses.map((r) => r.status)).toEqual([201, 201, 201]);
    });
  });

  describe('ORDER_HOLD_MINUTES: ExpireHeldOrders with the clock set by the test', () => {
    const HOLD_MS = 60 * 60_000;
    const placedAt = async (orderId: number): Promise<Date> =>
      (await store.db.query('SELECT created_at FROM orders WHERE id = $1', [orderId])).rows[0].created_at;
    const statusOf = async (orderId: number): Promise<string> =>
      (await store.db.query('SELECT status FROM orders WHERE id = $1', [orderId])).rows[0].status;
    const expireAt = (now: Date) => {
      jest.spyOn(api.app.get(Clock), 'now').mockReturnValue(now);
      return api.app.get(ExpireHeldOrders).execute();
    };

    it('expires orders open longer than the hold, as a cancel would: units back, pending pet available', async () => {
      const petId = await store.pet({ quantity: 5 });
      const customer = await api.customer('Slow');
      const early = await store.placed(customer.key, petId, 2);
      const late = await store.placed(customer.key, petId, 3);
      expect(await store.stock(petId)).toEqual({ quantity: 0, status: 'pending' });
      const [earlyAt, lateAt] = [await placedAt(early), await placedAt(late)];
      expect(lateAt.getTime()).toBeGreaterThan(earlyAt.getTime());

      // Exactly the hold: not longer than it yet.
      await expireAt(new Date(earlyAt.getTime() + HOLD_MS));
      expect([await statusOf(early), await statusOf(late)]).toEqual(['placed', 'placed']);

      const expiredAt = new Date(lateAt.getTime() + HOLD_MS);
      await expireAt(expiredAt);
      expect([await statusOf(early), await statusOf(late)]).toEqual(['expired', 'placed']);
      expect(await store.stock(petId)).toEqual({ quantity: 2, status: 'available' });
      // The expired order stays readable, with its status and the time it expired.
      const read = await api.get(`/store/orders/${early}`, { key: customer.key });
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({ id: early, status: 'expired', complete: false });
      expect(read.body.statusChangedAt).toBe(expiredAt.toISOString());
      expectError(await api.delete(`/store/orders/${early}`, { key: customer.key }), 409, 'order_already_cancelled');

      await expireAt(new Date(lateAt.getTime() + HOLD_MS + 1));
      expect(await statusOf(late)).toBe('expired');
      expect(await store.stock(petId)).toEqual({ quantity: 5, status: 'available' });
      expect(await store.ordersOf(petId)).toMatchObject({ open: 0, completed: 0, withdrawn: 2, withdrawnUnits: 5 });
      // A later run finds nothing more to give back: units come back once.
      await expireAt(new Date(lateAt.getTime() + 2 * HOLD_MS));
      expect(await store.stock(petId)).toEqual({ quantity: 5, status: 'available' });
    });

    it('never touches a completed order, and frees the hold limit of the customer', async () => {
      const petId = await store.pet({ quantity: 200 });
      const customer = await api.customer('Holder');
      const done = await store.placed(customer.key, petId, 50);
      expect((await api.patch(`/store/orders/${done}`, { key: ADMIN_KEY, body: { complete: true } })).status).toBe(200);
      const open = await store.placed(customer.key, petId, 100);
      expectError(await store.order(customer.key, { petId, quantity: 1 }), 409, 'hold_limit_reached');

      const result = await expireAt(new Date((await placedAt(open)).getTime() + HOLD_MS + 1));
      expect(result.expired).toBeGreaterThanOrEqual(1);
      expect([await statusOf(done), await statusOf(open)]).toEqual(['completed', 'expired']);
      expect(await store.stock(petId)).toEqual({ quantity: 150, status: 'available' });
      jest.restoreAllMocks();
      expect((await store.order(customer.key, { petId, quantity: 100 })).status).toBe(201);
    });

    it('skips an order completed between the look-up and the locks, and goes on', async () => {
      const petId = await store.pet({ quantity: 5 });
      const customer = await api.customer('Racer');
      const orderId = await store.placed(customer.key, petId, 2);
      const other = await store.pet({ quantity: 5 });
      const otherOrder = await store.placed(customer.key, other, 1);
      const blocker = new Client({ connectionString: api.databaseUrl });
      await blocker.connect();
      try {
        await blocker.query('BEGIN');
        await blocker.query('SELECT 1 FROM pets WHERE id = $1 FOR UPDATE', [petId]);
        const running = expireAt(new Date((await placedAt(otherOrder)).getTime() + HOLD_MS + 1));
        // The job has looked the order up and waits for its pet's lock; the order completes meanwhile.
        await eventually(async () => {
          const { rows } = await store.db.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE wait_event_type = 'Lock' AND query ILIKE '%FROM pets%FOR UPDATE%'`,
          );
          return rows[0].n > 0;
        });
        await blocker.query("UPDATE orders SET complete = true, status = 'completed' WHERE id = $1", [orderId]);
        await blocker.query('COMMIT');
        // Orders other tests left open expire too; only the completed one is skipped.
        expect(await running).toEqual({ expired: expect.any(Number), skipped: 1 });
      } finally {
        await blocker.end();
      }
      expect(await store.ordersOf(petId)).toMatchObject({ open: 0, completed: 1, openUnits: 0, completedUnits: 2 });
      expect(await store.stock(petId)).toEqual({ quantity: 3, status: 'available' });
      expect(await store.ordersOf(other)).toMatchObject({ open: 0, completed: 0, withdrawn: 1, withdrawnUnits: 1 });
      expect(await store.stock(other)).toEqual({ quantity: 5, status: 'available' });
    });

    it('works through more than one batch, each order in its own transaction', async () => {
      const petId = await store.pet({ quantity: 300 });
      const customers = await api.customers(3, 'Batch');
      // 150 one-unit orders (three customers, within their limit): more than one batch of 100.
      for (let i = 0; i < 150; i += 10) {
        await Promise.all(
          Array.from({ length: 10 }, (_, j) => store.placed(customers[(i + j) % customers.length], petId, 1)),
        );
      }
      const { rows } = await store.db.query('SELECT max(created_at) AS at FROM orders WHERE pet_id = $1', [petId]);
      const result = await expireAt(new Date(rows[0].at.getTime() + HOLD_MS + 1));
      expect(result.expired).toBeGreaterThanOrEqual(150);
      expect(await store.ordersOf(petId)).toMatchObject({ open: 0, completed: 0, withdrawn: 150, withdrawnUnits: 150 });
      expect(await store.stock(petId)).toEqual({ quantity: 300, status: 'available' });
    });
  });
});
