import {
  Account,
  HoldLimitReachedError,
  InsufficientStockError,
  Stock,
  InvalidValueError,
  OrderAlreadyCancelledError,
  OrderAlreadyCompleteError,
  OrderNotFoundError,
  PetNotAvailableError,
  StockLimitExceededError,
  UnknownPetError,
} from '@petstore/domain';
import { anAccount, anOrder, aPet, inMemoryPetstore, InMemoryPetstore } from '../../testing';
import { EXPIRY_BATCH_SIZE, ExpireHeldOrders } from './expire-held-orders';
import { OrderHoldSettings } from './order-hold.settings';
import { CancelOrder, CompleteOrder, OrderQueries, PlaceOrder } from './order.use-cases';
import { EVERY_ACCOUNT } from '../events/event.ports';

describe('order use cases (in-memory ports)', () => {
  let store: InMemoryPetstore;
  let alice: Account;
  let bob: Account;
  let admin: Account;
  beforeEach(async () => {
    store = inMemoryPetstore();
    alice = await anAccount().customer().saveIn(store);
    bob = await anAccount().customer().saveIn(store);
    admin = await anAccount().admin().saveIn(store);
  });
  const HOLD_MINUTES = 30;

  const placeOrder = (maxOpenUnits = 0) =>
    new PlaceOrder(
      store.uow,
      store.orderCommand,
      store.orders,
      store.accounts,
      store.clock,
      new OrderHoldSettings(maxOpenUnits, HOLD_MINUTES),
    );
  const place = (petId: number, quantity = 1, by = alice) => placeOrder().execute({ petId, quantity, by });
  const stockOf = async (petId: number) => (await store.stocks.findByPetId(petId))?.quantity;
  const statusOf = async (petId: number) => (await store.pets.findById(petId))?.status;
  /** An administrator's restock while orders are open, without the use case (only the quantity moves). */
  const stockSetDirectly = (petId: number, quantity: number) =>
    store.stocks.save(Stock.restore({ petId, quantity, version: 1 }));

  describe('PlaceOrder', () => {
    it("takes the units from stock; the order is open and the customer's", async () => {
      const { pet } = await aPet().available().withStock(3).saveIn(store);
      const shipDate = new Date(store.clock.now().getTime() + 86_400_000);
      const order = await placeOrder().execute({ petId: pet.id, quantity: 2, shipDate, by: alice });
      expect(order.toSnapshot()).toEqual({
        id: expect.any(Number),
        petId: pet.id,
        quantity: 2,
        shipDate,
        status: 'placed',
        createdAt: store.clock.now(),
        statusChangedAt: store.clock.now(),
        ownerId: alice.id,
        version: 1,
      });
      expect((await store.orders.findById(order.id))?.isOpen).toBe(true);
      expect(await stockOf(pet.id)).toBe(1);
      expect(await statusOf(pet.id)).toBe('available');
    });

    it('the last unit turns the pet pending', async () => {
      const { pet } = await aPet().available().withStock(2).saveIn(store);
      await place(pet.id, 2);
      expect(await stockOf(pet.id)).toBe(0);
      expect(await statusOf(pet.id)).toBe('pending');
    });

    it("records its events in the order's transaction: the pet's status and stock, then order.placed", async () => {
      const { pet } = await aPet().available().withStock(1).saveIn(store);
      const order = await place(pet.id, 1);
      const events = [...store.db.tables.webhookEvents.values()].map(({ type, subjectOwnerId, body }) => ({
        type,
        subjectOwnerId,
        data: JSON.parse(body).data,
      }));
      // Each with the version stored after the change: the entry's counts its quantity and its pet's status.
      const pets = (await store.pets.findById(pet.id))?.version;
      const stock = (await store.stockLevels.find(pet.id))?.version;
      expect([pets, stock]).toEqual([pet.version + 1, 3]); // the entry: 1 at creation, its unit taken, its status
      expect(events).toEqual([
        {
          type: 'pet.status_changed',
          subjectOwnerId: null,
          data: expect.objectContaining({ id: pet.id, status: 'pending', version: pets }),
        },
        {
          type: 'pet.updated',
          subjectOwnerId: EVERY_ACCOUNT,
          data: expect.objectContaining({ id: pet.id, status: 'pending', version: pets }),
        },
        {
          type: 'inventory.changed',
          subjectOwnerId: EVERY_ACCOUNT,
          data: { petId: pet.id, quantity: 0, status: 'pending', version: stock },
        },
        {
          type: 'order.placed',
          subjectOwnerId: alice.id,
          data: { id: order.id, petId: pet.id, complete: false, version: 1 },
        },
      ]);
    });

    it('a refused order records no event', async () => {
      const { pet } = await aPet().available().withStock(1).saveIn(store);
      await expect(place(pet.id, 2)).rejects.toBeInstanceOf(InsufficientStockError);
      expect(store.db.tables.webhookEvents.size).toBe(0);
    });

    it('refuses an unknown pet with UnknownPetError', async () => {
      await expect(place(404)).rejects.toBeInstanceOf(UnknownPetError);
    });

    it.each(['pending', 'sold'] as const)('refuses a %s pet (pet_not_available)', async (status) => {
      const { pet } = await aPet().withStatus(status).withStock(5).saveIn(store);
      await expect(place(pet.id)).rejects.toBeInstanceOf(PetNotAvailableError);
      expect(await stockOf(pet.id)).toBe(5);
    });

    it('refuses more units than in stock (insufficient_stock), storing nothing', async () => {
      const { pet } = await aPet().available().withStock(2).saveIn(store);
      await expect(place(pet.id, 3)).rejects.toBeInstanceOf(InsufficientStockError);
      expect(await stockOf(pet.id)).toBe(2);
      expect((await store.orders.list({}, { limit: 10 })).items).toEqual([]);
    });

    it.each([0, 1001, 1.5])('refuses quantity %p', async (quantity) => {
      const { pet } = await aPet().withStock(5).saveIn(store);
      await expect(place(pet.id, quantity)).rejects.toMatchObject({ field: 'quantity' });
    });

    it('refuses a ship date more than a day in the past', async () => {
      const { pet } = await aPet().withStock(5).saveIn(store);
      const shipDate = new Date(store.clock.now().getTime() - 2 * 86_400_000);
      await expect(placeOrder().execute({ petId: pet.id, quantity: 1, shipDate, by: alice })).rejects.toBeInstanceOf(
        InvalidValueError,
      );
    });

    describe('hold limit', () => {
      it('refuses a customer whose open units would exceed it; the stock is left as it was', async () => {
        const { pet } = await aPet().withStock(20).saveIn(store);
        await placeOrder(5).execute({ petId: pet.id, quantity: 3, by: alice });
        await expect(placeOrder(5).execute({ petId: pet.id, quantity: 3, by: alice })).rejects.toEqual(
          new HoldLimitReachedError(3, 3, 5),
        );
        expect(await stockOf(pet.id)).toBe(17);
        expect((await placeOrder(5).execute({ petId: pet.id, quantity: 2, by: alice })).quantity).toBe(2);
      });

      it('counts only open orders, per customer', async () => {
        const { pet } = await aPet().withStock(20).saveIn(store);
        await anOrder().forPet(pet.id).ofQuantity(5).ownedBy(alice.id).completed().saveIn(store);
        await placeOrder(5).execute({ petId: pet.id, quantity: 5, by: bob });
        expect((await placeOrder(5).execute({ petId: pet.id, quantity: 5, by: alice })).quantity).toBe(5);
      });

      it('does not apply to administrators, nor when it is 0', async () => {
        const { pet } = await aPet().withStock(20).saveIn(store);
        await placeOrder(2).execute({ petId: pet.id, quantity: 5, by: admin });
        await placeOrder(2).execute({ petId: pet.id, quantity: 5, by: admin });
        await placeOrder(0).execute({ petId: pet.id, quantity: 5, by: alice });
        expect(await stockOf(pet.id)).toBe(5);
      });

      it('holds for simultaneous orders of one customer (the fake runs transactions one at a time)', async () => {
        const { pet } = await aPet().withStock(20).saveIn(store);
        const results = await Promise.allSettled(
          [1, 2, 3].map(() => placeOrder(5).execute({ petId: pet.id, quantity: 2, by: alice })),
        );
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
        expect(results.find((r) => r.status === 'rejected')).toMatchObject({
          reason: expect.any(HoldLimitReachedError),
        });
        expect(await stockOf(pet.id)).toBe(16);
      });
    });
  });

  describe('CompleteOrder', () => {
    const complete = (orderId: number, shipDate?: Date) =>
      new CompleteOrder(store.uow, store.orderCommand, store.clock).execute({ orderId, shipDate });

    it("completes at the clock's time when no ship date was given; the stock does not move", async () => {
      const { pet } = await aPet().withStock(3).saveIn(store);
      const order = await place(pet.id);
      const done = await complete(order.id);
      const at = store.clock.now();
      expect(done.toSnapshot()).toMatchObject({ status: 'completed', statusChangedAt: at, shipDate: at });
      expect((await store.orders.findById(order.id))?.isComplete).toBe(true);
      expect(await stockOf(pet.id)).toBe(2);
      expect(await statusOf(pet.id)).toBe('available');
    });

    it('keeps the ordered ship date, or takes the one given', async () => {
      const { pet } = await aPet().withStock(3).saveIn(store);
      const ordered = new Date('2026-03-01T00:00:00.000Z');
      const a = await placeOrder().execute({ petId: pet.id, quantity: 1, shipDate: ordered, by: alice });
      expect((await complete(a.id)).shipDate).toEqual(ordered);
      const b = await place(pet.id);
      const actual = new Date('2026-01-10T00:00:00.000Z');
      expect((await complete(b.id, actual)).shipDate).toEqual(actual);
    });

    it('sells a pending pet with no stock once its last open order completes', async () => {
      const { pet } = await aPet().withStock(2).saveIn(store);
      const first = await place(pet.id);
      const second = await place(pet.id);
      expect(await statusOf(pet.id)).toBe('pending');
      await complete(first.id);
      expect(await statusOf(pet.id)).toBe('pending');
      await complete(second.id);
      expect(await statusOf(pet.id)).toBe('sold');
    });

    it('refuses an unknown order, and a completed one (order_already_complete)', async () => {
      await expect(complete(404)).rejects.toBeInstanceOf(OrderNotFoundError);
      const { pet } = await aPet().withStock(2).saveIn(store);
      const order = await place(pet.id);
      await complete(order.id);
      await expect(complete(order.id)).rejects.toBeInstanceOf(OrderAlreadyCompleteError);
    });
  });

  describe('CancelOrder', () => {
    const cancel = (orderId: number, by = alice) =>
      new CancelOrder(store.uow, store.orderCommand, store.clock).execute({ orderId, by });

    it('gives the units back, makes a pending pet available and keeps the order, cancelled', async () => {
      const { pet } = await aPet().withStock(2).saveIn(store);
      const order = await place(pet.id, 2);
      expect(await statusOf(pet.id)).toBe('pending');
      store.clock.advanceMinutes(5);
      const cancelled = await cancel(order.id);
      expect(await stockOf(pet.id)).toBe(2);
      expect(await statusOf(pet.id)).toBe('available');
      expect(cancelled.toSnapshot()).toEqual({
        ...order.toSnapshot(),
        status: 'cancelled',
        statusChangedAt: store.clock.now(),
        version: 2,
      });
      // The version the store gave the change is the one the use case returns (and its event carries).
      expect((await store.orders.findById(order.id))?.toSnapshot()).toEqual(cancelled.toSnapshot());
    });

    it("lets an administrator cancel anyone's order; another customer's is not found", async () => {
      const { pet } = await aPet().withStock(2).saveIn(store);
      const order = await place(pet.id);
      await expect(cancel(order.id, bob)).rejects.toBeInstanceOf(OrderNotFoundError);
      expect((await store.orders.findById(order.id))?.isOpen).toBe(true);
      await cancel(order.id, admin);
      expect((await store.orders.findById(order.id))?.status).toBe('cancelled');
    });

    it('refuses a completed order, and one cancelled already, returning its units once', async () => {
      const { pet } = await aPet().withStock(3).saveIn(store);
      const done = await place(pet.id);
      await new CompleteOrder(store.uow, store.orderCommand, store.clock).execute({ orderId: done.id });
      await expect(cancel(done.id)).rejects.toBeInstanceOf(OrderAlreadyCompleteError);
      const order = await place(pet.id);
      await cancel(order.id);
      await expect(cancel(order.id)).rejects.toBeInstanceOf(OrderAlreadyCancelledError);
      const refusal = { kind: 'order_already_cancelled', how: 'cancelled' };
      await expect(cancel(order.id, admin)).rejects.toMatchObject(refusal);
      await expect(
        new CompleteOrder(store.uow, store.orderCommand, store.clock).execute({ orderId: order.id }),
      ).rejects.toBeInstanceOf(OrderAlreadyCancelledError);
      expect(await stockOf(pet.id)).toBe(2);
    });

    it('refuses when the units would lift the stock over its limit (stock_limit_exceeded)', async () => {
      const { pet } = await aPet().withStock(2).saveIn(store);
      const order = await place(pet.id, 2);
      await stockSetDirectly(pet.id, 2_147_483_647);
      await expect(cancel(order.id)).rejects.toBeInstanceOf(StockLimitExceededError);
      expect((await store.orders.findById(order.id))?.isOpen).toBe(true);
    });
  });

  describe('ExpireHeldOrders', () => {
    const expire = () =>
      new ExpireHeldOrders(
        store.uow,
        store.orders,
        store.orderCommand,
        store.clock,
        new OrderHoldSettings(0, HOLD_MINUTES),
      ).execute();

    it('expires orders open longer than the hold, as their owner would cancel; younger, completed stay', async () => {
      const { pet } = await aPet().withStock(4).saveIn(store);
      const old = await place(pet.id, 2);
      const done = await place(pet.id, 1);
      await new CompleteOrder(store.uow, store.orderCommand, store.clock).execute({ orderId: done.id });
      store.clock.advanceMinutes(HOLD_MINUTES - 1);
      const young = await place(pet.id, 1, bob);
      expect(await statusOf(pet.id)).toBe('pending');
      store.clock.advanceMinutes(2);
      expect(await expire()).toEqual({ expired: 1, skipped: 0 });
      expect((await store.orders.findById(old.id))?.toSnapshot()).toMatchObject({
        status: 'expired',
        statusChangedAt: store.clock.now(),
      });
      // Expired is final: neither a cancel nor a second run returns its units again.
      await expect(
        new CancelOrder(store.uow, store.orderCommand, store.clock).execute({ orderId: old.id, by: alice }),
      ).rejects.toMatchObject({ kind: 'order_already_cancelled', how: 'expired' });
      expect(await expire()).toEqual({ expired: 0, skipped: 0 });
      expect((await store.orders.findById(done.id))?.isComplete).toBe(true);
      expect((await store.orders.findById(young.id))?.isOpen).toBe(true);
      expect(await stockOf(pet.id)).toBe(2);
      expect(await statusOf(pet.id)).toBe('available');
    });

    it('leaves an order placed within the hold', async () => {
      const { pet } = await aPet().withStock(3).saveIn(store);
      const order = await place(pet.id);
      store.clock.advanceMinutes(HOLD_MINUTES - 1);
      expect(await expire()).toEqual({ expired: 0, skipped: 0 });
      expect((await store.orders.findById(order.id))?.isOpen).toBe(true);
    });

    it('skips an order a stock rule refuses to cancel, and still expires the others', async () => {
      const { pet: full } = await aPet().withStock(2).saveIn(store);
      const stuck = await place(full.id);
      const { pet } = await aPet().withStock(2).saveIn(store);
      const other = await place(pet.id);
      await stockSetDirectly(full.id, 2_147_483_647);
      store.clock.advanceMinutes(HOLD_MINUTES + 1);
      expect(await expire()).toEqual({ expired: 1, skipped: 1 });
      expect((await store.orders.findById(stuck.id))?.isOpen).toBe(true);
      expect((await store.orders.findById(other.id))?.status).toBe('expired');
    });

    it('works through more than one batch', async () => {
      const { pet } = await aPet()
        .withStock(EXPIRY_BATCH_SIZE + 5)
        .saveIn(store);
      for (let i = 0; i < EXPIRY_BATCH_SIZE + 5; i++) await place(pet.id, 1, admin);
      store.clock.advanceMinutes(HOLD_MINUTES + 1);
      expect(await expire()).toEqual({ expired: EXPIRY_BATCH_SIZE + 5, skipped: 0 });
      expect(await stockOf(pet.id)).toBe(EXPIRY_BATCH_SIZE + 5);
    });
  });

  describe('OrderQueries', () => {
    it('shows a customer its own orders only; an administrator all', async () => {
      const { pet } = await aPet().withStock(5).saveIn(store);
      const mine = await place(pet.id, 1, alice);
      const theirs = await place(pet.id, 1, bob);
      const queries = new OrderQueries(store.orders);
      expect((await queries.get(mine.id, alice)).id).toBe(mine.id);
      await expect(queries.get(theirs.id, alice)).rejects.toBeInstanceOf(OrderNotFoundError);
      expect((await queries.get(theirs.id, admin)).id).toBe(theirs.id);
      await expect(queries.get(404, admin)).rejects.toBeInstanceOf(OrderNotFoundError);
      expect((await queries.list({}, alice, { limit: 10 })).items.map((o) => o.id)).toEqual([mine.id]);
      expect((await queries.list({ petId: pet.id }, admin, { limit: 10 })).items.map((o) => o.id)).toEqual([
        mine.id,
        theirs.id,
      ]);
      await new CancelOrder(store.uow, store.orderCommand, store.clock).execute({ orderId: theirs.id, by: bob });
      const byStatus = (status: Array<'placed' | 'cancelled'>) =>
        queries.list({ status }, admin, { limit: 10 }).then((page) => page.items.map((o) => o.id));
      expect(await byStatus(['placed'])).toEqual([mine.id]);
      expect(await byStatus(['cancelled'])).toEqual([theirs.id]);
      expect((await queries.get(theirs.id, bob)).status).toBe('cancelled');
    });
  });
});
