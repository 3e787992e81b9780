import {
  CancelOrder,
  CompleteOrder,
  ExpireHeldOrders,
  OrderHoldSettings,
  OrderQueries,
  PlaceOrder,
} from '@petstore/application';
import { aCategory, anAccount, aPet } from '@petstore/application/testing';
import { Account } from '@petstore/domain';
import { StoreRows } from '@petstore/testing';
import { Client } from 'pg';
import { useTestDatabase } from '../support/real-database';
import { pgPetstore, PgPetstore } from '../support/pg-petstore';

/** MAX_OPEN_UNITS_PER_CUSTOMER's default (apps/api's configuration; its e2e holds the default itself). */
const MAX_OPEN_UNITS = 100;
const HOLD_MINUTES = 60;
const HOLD_MS = HOLD_MINUTES * 60_000;

async function eventually(condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Stock hoarding, on the use cases and the PostgreSQL repositories (the medium tier: no HTTP): the per-customer hold
 * limit (MAX_OPEN_UNITS_PER_CUSTOMER) under concurrent orders on the real pool, and the order-hold expiry
 * (ORDER_HOLD_MINUTES) with the clock set by the test. Moved from apps/api/test/store-holds.e2e.spec.ts, which keeps
 * the limit's default and its HTTP answer (409 hold_limit_reached after a 400 for bad input).
 */
describe('order holds (use cases, real PostgreSQL)', () => {
  const db = useTestDatabase();
  let store: PgPetstore;
  let rows: StoreRows;
  let placeOrder: PlaceOrder;
  let completeOrder: CompleteOrder;
  let cancelOrder: CancelOrder;
  let orderQueries: OrderQueries;
  let expireHeldOrders: ExpireHeldOrders;
  let categoryId: number;
  let admin: Account;

  beforeAll(async () => {
    store = pgPetstore(db.host);
    const holds = new OrderHoldSettings(MAX_OPEN_UNITS, HOLD_MINUTES);
    const { uow, orderCommand, orders, accounts, clock } = store;
    placeOrder = new PlaceOrder(uow, orderCommand, orders, accounts, clock, holds);
    completeOrder = new CompleteOrder(uow, orderCommand, clock);
    cancelOrder = new CancelOrder(uow, orderCommand, clock);
    orderQueries = new OrderQueries(orders);
    expireHeldOrders = new ExpireHeldOrders(uow, orders, orderCommand, clock, holds);
    categoryId = (await aCategory().named(`Holds ${Date.now()}`).saveIn(store)).id;
    admin = await anAccount().admin().saveIn(store);
    rows = await StoreRows.on(db.url);
  });
  afterAll(() => rows.close());

  const pet = async (quantity: number): Promise<number> =>
    (await aPet().inCategory(categoryId).withStock(quantity).saveIn(store)).pet.id;
  // Accounts get unique names from the builder; the e2e's names (Hoarder, Spreader, …) were labels only.
  const customer = (): Promise<Account> => anAccount().saveIn(store);
  const order = (by: Account, petId: number, quantity: number) => placeOrder.execute({ by, petId, quantity });
  const placed = async (by: Account, petId: number, quantity: number): Promise<number> =>
    (await order(by, petId, quantity)).id;
  const stock = async (petId: number) => {
    const level = await store.stockLevels.find(petId);
    return { quantity: level?.quantity, status: level?.status };
  };
  const openUnitsOf = async (ownerId: number): Promise<number> => {
    const { rows: units } = await rows.db.query(
      "SELECT coalesce(sum(quantity), 0)::int AS units FROM orders WHERE owner_id = $1 AND status = 'placed'",
      [ownerId],
    );
    return units[0].units;
  };
  /** Each outcome: the order's id, or the kind of the error that refused it. */
  const settle = (attempts: Array<Promise<{ id: number }>>) =>
    Promise.all(
      attempts.map((attempt) =>
        attempt.then(
          (o) => o.id,
          (error) => error.kind as string,
        ),
      ),
    );

  describe('MAX_OPEN_UNITS_PER_CUSTOMER', () => {
    it('20 concurrent 7-unit orders of one customer: exactly the 14 within 100 units succeed', async () => {
      const petId = await pet(1000);
      const hoarder = await customer();
      const outcomes = await settle(Array.from({ length: 20 }, () => order(hoarder, petId, 7)));
      const created = outcomes.filter((outcome) => typeof outcome === 'number');
      const refused = outcomes.filter((outcome) => typeof outcome !== 'number');
      expect(created).toHaveLength(14);
      expect(refused).toHaveLength(6);
      for (const kind of refused) expect(kind).toBe('hold_limit_reached');
      expect(await openUnitsOf(hoarder.id)).toBe(98);
      expect(await stock(petId)).toEqual({ quantity: 1000 - 98, status: 'available' });
    });

    it('concurrent orders of one customer for different pets share one limit', async () => {
      const pets = await Promise.all(Array.from({ length: 4 }, () => pet(100)));
      const spreader = await customer();
      const outcomes = await settle(Array.from({ length: 20 }, (_, i) => order(spreader, pets[i % pets.length], 10)));
      expect(outcomes.filter((outcome) => typeof outcome === 'number')).toHaveLength(10);
      const refused = outcomes.filter((outcome) => typeof outcome !== 'number');
      for (const kind of refused) expect(kind).toBe('hold_limit_reached');
      expect(await openUnitsOf(spreader.id)).toBe(100);
    });

    it('counts open orders only: completed and cancelled ones free their units; each customer its own', async () => {
      const petId = await pet(1000);
      const alice = await customer();
      const bob = await customer();
      const first = await placed(alice, petId, 60);
      const second = await placed(alice, petId, 40);
      await expect(order(alice, petId, 1)).rejects.toMatchObject({ kind: 'hold_limit_reached' });
      expect((await order(bob, petId, 100)).status).toBe('placed');

      expect((await completeOrder.execute({ orderId: first })).status).toBe('completed');
      expect((await order(alice, petId, 60)).status).toBe('placed');
      await expect(order(alice, petId, 1)).rejects.toMatchObject({ kind: 'hold_limit_reached' });
      expect((await cancelOrder.execute({ orderId: second, by: alice })).status).toBe('cancelled');
      expect((await order(alice, petId, 40)).status).toBe('placed');
    });

    it('leaves nothing behind a refusal', async () => {
      const petId = await pet(1000);
      const full = await customer();
      await placed(full, petId, 100);
      const before = await stock(petId);
      await expect(order(full, petId, 5)).rejects.toMatchObject({ kind: 'hold_limit_reached' });
      expect(await stock(petId)).toEqual(before);
      expect(await rows.ordersOf(petId)).toEqual(expect.objectContaining({ open: 1, openUnits: 100 }));
    });

    it('does not apply to administrators', async () => {
      const petId = await pet(1000);
      const statuses: string[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await order(admin, petId, 100)).status);
      expect(statuses).toEqual(['placed', 'placed', 'placed']);
    });
  });

  describe('ORDER_HOLD_MINUTES: ExpireHeldOrders with the clock set by the test', () => {
    const placedAt = async (orderId: number): Promise<Date> =>
      (await rows.db.query('SELECT created_at FROM orders WHERE id = $1', [orderId])).rows[0].created_at;
    const statusOf = async (orderId: number): Promise<string> =>
      (await rows.db.query('SELECT status FROM orders WHERE id = $1', [orderId])).rows[0].status;
    const expireAt = (now: Date) => {
      store.clock.set(now);
      return expireHeldOrders.execute();
    };
    /** The clock a little after the last run: orders are placed at their own times, later than the previous test's. */
    beforeEach(() => store.clock.set(new Date(Math.max(store.clock.now().getTime(), Date.now()) + 60_000)));

    it('expires orders open longer than the hold, as a cancel would: units back, pending pet available', async () => {
      const petId = await pet(5);
      const slow = await customer();
      const early = await placed(slow, petId, 2);
      store.clock.advanceMinutes(1);
      const late = await placed(slow, petId, 3);
      expect(await stock(petId)).toEqual({ quantity: 0, status: 'pending' });
      const [earlyAt, lateAt] = [await placedAt(early), await placedAt(late)];
      expect(lateAt.getTime()).toBeGreaterThan(earlyAt.getTime());

      // Exactly the hold: not longer than it yet.
      await expireAt(new Date(earlyAt.getTime() + HOLD_MS));
      expect([await statusOf(early), await statusOf(late)]).toEqual(['placed', 'placed']);

      const expiredAt = new Date(lateAt.getTime() + HOLD_MS);
      await expireAt(expiredAt);
      expect([await statusOf(early), await statusOf(late)]).toEqual(['expired', 'placed']);
      expect(await stock(petId)).toEqual({ quantity: 2, status: 'available' });
      // The expired order stays readable, with its status and the time it expired.
      const read = await orderQueries.get(early, slow);
      expect(read.toSnapshot()).toMatchObject({ id: early, status: 'expired' });
      expect(read.statusChangedAt.toISOString()).toBe(expiredAt.toISOString());
      await expect(cancelOrder.execute({ orderId: early, by: slow })).rejects.toMatchObject({
        kind: 'order_already_cancelled',
      });

      await expireAt(new Date(lateAt.getTime() + HOLD_MS + 1));
      expect(await statusOf(late)).toBe('expired');
      expect(await stock(petId)).toEqual({ quantity: 5, status: 'available' });
      expect(await rows.ordersOf(petId)).toMatchObject({ open: 0, completed: 0, withdrawn: 2, withdrawnUnits: 5 });
      // A later run finds nothing more to give back: units come back once.
      await expireAt(new Date(lateAt.getTime() + 2 * HOLD_MS));
      expect(await stock(petId)).toEqual({ quantity: 5, status: 'available' });
    });

    it('never touches a completed order, and frees the hold limit of the customer', async () => {
      const petId = await pet(200);
      const holder = await customer();
      const done = await placed(holder, petId, 50);
      expect((await completeOrder.execute({ orderId: done })).status).toBe('completed');
      const open = await placed(holder, petId, 100);
      await expect(order(holder, petId, 1)).rejects.toMatchObject({ kind: 'hold_limit_reached' });

      const result = await expireAt(new Date((await placedAt(open)).getTime() + HOLD_MS + 1));
      expect(result.expired).toBeGreaterThanOrEqual(1);
      expect([await statusOf(done), await statusOf(open)]).toEqual(['completed', 'expired']);
      expect(await stock(petId)).toEqual({ quantity: 150, status: 'available' });
      expect((await order(holder, petId, 100)).status).toBe('placed');
    });

    it('skips an order completed between the look-up and the locks, and goes on', async () => {
      const petId = await pet(5);
      const racer = await customer();
      const orderId = await placed(racer, petId, 2);
      const other = await pet(5);
      const otherOrder = await placed(racer, other, 1);
      const blocker = new Client({ connectionString: db.url });
      await blocker.connect();
      try {
        await blocker.query('BEGIN');
        await blocker.query('SELECT 1 FROM pets WHERE id = $1 FOR UPDATE', [petId]);
        const running = expireAt(new Date((await placedAt(otherOrder)).getTime() + HOLD_MS + 1));
        // The job has looked the order up and waits for its pet's lock; the order completes meanwhile.
        await eventually(async () => {
          const { rows: waiting } = await rows.db.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE wait_event_type = 'Lock' AND query ILIKE '%FROM pets%FOR UPDATE%'`,
          );
          return waiting[0].n > 0;
        });
        await blocker.query("UPDATE orders SET complete = true, status = 'completed' WHERE id = $1", [orderId]);
        await blocker.query('COMMIT');
        // Orders the other tests left open expire too; only the completed one is skipped.
        expect(await running).toEqual({ expired: expect.any(Number), skipped: 1 });
      } finally {
        await blocker.end();
      }
      expect(await rows.ordersOf(petId)).toMatchObject({ open: 0, completed: 1, openUnits: 0, completedUnits: 2 });
      expect(await stock(petId)).toEqual({ quantity: 3, status: 'available' });
      expect(await rows.ordersOf(other)).toMatchObject({ open: 0, completed: 0, withdrawn: 1, withdrawnUnits: 1 });
      expect(await stock(other)).toEqual({ quantity: 5, status: 'available' });
    });

    it('works through more than one batch, each order in its own transaction', async () => {
      const petId = await pet(300);
      const batch = await Promise.all([0, 1, 2].map(() => customer()));
      // 150 one-unit orders (three customers, within their limit): more than one batch of 100.
      for (let i = 0; i < 150; i += 10) {
        await Promise.all(Array.from({ length: 10 }, (_, j) => placed(batch[(i + j) % batch.length], petId, 1)));
      }
      const { rows: last } = await rows.db.query('SELECT max(created_at) AS at FROM orders WHERE pet_id = $1', [petId]);
      const result = await expireAt(new Date(last[0].at.getTime() + HOLD_MS + 1));
      expect(result.expired).toBeGreaterThanOrEqual(150);
      expect(await rows.ordersOf(petId)).toMatchObject({ open: 0, completed: 0, withdrawn: 150, withdrawnUnits: 150 });
      expect(await stock(petId)).toEqual({ quantity: 300, status: 'available' });
    });
  });
});
