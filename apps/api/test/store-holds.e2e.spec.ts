import { Clock, ExpireHeldOrders } from '@petstore/application';
import { loadConfig } from '../src/config/app-config';
import { StoreFixtures } from './support/store-fixtures';
import { expectError, TestApp } from './support/test-app';

const DEFAULTS = loadConfig({}).ordering;

/**
 * Stock hoarding over HTTP: the per-customer hold limit's default and its HTTP answer, and how an expired order reads
 * (ORDER_HOLD_MINUTES, with the app's clock set by the test). The limit under concurrent orders and the expiry's
 * business cases run on the use cases and PostgreSQL, without HTTP: libs/infrastructure/test/medium/
 * order-holds.medium.spec.ts (the medium tier).
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

  describe('MAX_OPEN_UNITS_PER_CUSTOMER', () => {
    it('defaults to 100 units', () => {
      expect(DEFAULTS.maxOpenUnitsPerCustomer).toBe(100);
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
  });

  describe('ORDER_HOLD_MINUTES: ExpireHeldOrders with the clock set by the test', () => {
    const HOLD_MS = 60 * 60_000;
    const placedAt = async (orderId: number): Promise<Date> =>
      (await store.db.query('SELECT created_at FROM orders WHERE id = $1', [orderId])).rows[0].created_at;
    const expireAt = (now: Date) => {
      jest.spyOn(api.app.get(Clock), 'now').mockReturnValue(now);
      return api.app.get(ExpireHeldOrders).execute();
    };

    it('an expired order stays readable, with its status and the time it expired; a cancel is 409', async () => {
      const petId = await store.pet({ quantity: 5 });
      const customer = await api.customer('Slow');
      const early = await store.placed(customer.key, petId, 2);
      const expiredAt = new Date((await placedAt(early)).getTime() + HOLD_MS + 1);
      await expireAt(expiredAt);
      const read = await api.get(`/store/orders/${early}`, { key: customer.key });
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({ id: early, status: 'expired', complete: false });
      expect(read.body.statusChangedAt).toBe(expiredAt.toISOString());
      expectError(await api.delete(`/store/orders/${early}`, { key: customer.key }), 409, 'order_already_cancelled');
    });
  });
});
