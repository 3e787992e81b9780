import { Order } from '@petstore/domain';
import { CategoryRepository } from '../../src/category/category.repository';
import { StockRepository } from '../../src/stock/stock.repository';
import { OrderRepository } from '../../src/order/order.repository';
import { OpenOrders } from '../../src/stock/open-orders';
import { PetRepository } from '../../src/stock/pet.repository';
import { ConstraintViolationError, UnitOfWork } from '../../src/ports';
import { anOrder, aPet } from '../builders/builders';

export interface OrderContractSubject {
  categories: CategoryRepository;
  pets: PetRepository;
  stocks: StockRepository;
  orders: OrderRepository;
  /** The catalogue's port on the same table (the open orders of a pet). */
  openOrders: OpenOrders;
  uow: UnitOfWork;
  /** An account that may own orders (a row in the real store), by id. */
  newAccountId(): Promise<number>;
}

/** Times no test run is near: orders are placed at the store's "now", which lies between them. */
const LONG_AGO = new Date('2000-01-01T00:00:00Z');
const FAR_AHEAD = new Date('2100-01-01T00:00:00Z');

/**
 * The behaviour of an OrderRepository the order use cases rely on, and of OpenOrders (what the catalogue asks of the
 * same table), run against the in-memory fakes and the PostgreSQL adapters. `makeRepo` gives a fresh, empty store
 * each test.
 */
export function describeOrderRepositoryContract(name: string, makeRepo: () => Promise<OrderContractSubject>): void {
  describe(`OrderRepository contract: ${name}`, () => {
    let subject: OrderContractSubject;
    let orders: OrderRepository;
    let alice: number;
    let bob: number;
    let petId: number;

    beforeEach(async () => {
      subject = await makeRepo();
      orders = subject.orders;
      alice = await subject.newAccountId();
      bob = await subject.newAccountId();
      petId = (await aPet().withStock(50).saveIn(subject)).pet.id;
    });

    it('inserts with an id from a sequence and reads back; an update writes status, its time, ship date', async () => {
      const shipDate = new Date('2026-02-01T00:00:00.000Z');
      const placedAt = new Date('2026-01-31T10:00:00.123Z');
      const order = await anOrder()
        .forPet(petId)
        .ofQuantity(2)
        .ownedBy(alice)
        .shipping(shipDate)
        .placedAt(placedAt)
        .saveIn(subject);
      expect(order.id).toBeGreaterThan(0);
      expect((await orders.findById(order.id))?.toSnapshot()).toEqual({
        id: order.id,
        petId,
        quantity: 2,
        shipDate,
        status: 'placed',
        createdAt: placedAt,
        statusChangedAt: placedAt,
        ownerId: alice,
        version: 1,
      });
      const next = await anOrder().forPet(petId).ownedBy(alice).saveIn(subject);
      expect(next.id).toBeGreaterThan(order.id);
      order.complete(new Date('2026-02-03T00:00:00.000Z'), new Date('2026-02-02T00:00:00.000Z'));
      await orders.save(order);
      expect((await orders.findById(order.id))?.toSnapshot()).toMatchObject({
        status: 'completed',
        statusChangedAt: new Date('2026-02-03T00:00:00.000Z'),
        createdAt: placedAt,
        shipDate: new Date('2026-02-02T00:00:00.000Z'),
        quantity: 2,
        version: 2,
      });
      expect((await orders.findById(order.id))?.isComplete).toBe(true);
      next.cancel(new Date('2026-02-04T00:00:00.000Z'), 'expired');
      await orders.save(next);
      expect((await orders.findById(next.id))?.toSnapshot()).toMatchObject({
        status: 'expired',
        statusChangedAt: new Date('2026-02-04T00:00:00.000Z'),
        version: 2,
      });
      expect(await orders.findById(next.id + 1000)).toBeNull();
    });

    it('hands out new ids in ascending order; add refuses an id stored already, save an id not stored', async () => {
      const [first, second] = [await orders.nextId(), await orders.nextId()];
      expect(first).toBeGreaterThan(0);
      expect(second).toBeGreaterThan(first);
      const stored = await anOrder().forPet(petId).ownedBy(alice).saveIn(subject);
      await expect(orders.add(anOrder().forPet(petId).ownedBy(bob).build(stored.id))).rejects.toMatchObject({
        kind: 'constraint_violation',
        constraintKind: 'unique',
      });
      await orders.save(anOrder().forPet(petId).ownedBy(bob).completed().build(second));
      expect(await orders.findById(second)).toBeNull();
      expect((await orders.list({}, { limit: 10 })).items.map((o) => o.id)).toEqual([stored.id]);
    });

    it('refuses an order of an unknown pet or owner (foreign keys), storing nothing', async () => {
      const unknownOwner = anOrder()
        .forPet(petId)
        .ownedBy(bob + 1000)
        .saveIn(subject);
      await expect(unknownOwner).rejects.toMatchObject({ constraintKind: 'foreign_key' });
      await expect(
        anOrder()
          .forPet(petId + 1000)
          .ownedBy(alice)
          .saveIn(subject),
      ).rejects.toBeInstanceOf(ConstraintViolationError);
      expect((await orders.list({}, { limit: 10 })).items).toEqual([]);
    });

    it('counts the open orders of a pet, leaving one out if asked; OpenOrders counts the same', async () => {
      const a = await anOrder().forPet(petId).ownedBy(alice).saveIn(subject);
      await anOrder().forPet(petId).ownedBy(bob).saveIn(subject);
      await anOrder().forPet(petId).ownedBy(bob).completed().saveIn(subject);
      await anOrder().forPet(petId).ownedBy(bob).cancelled().saveIn(subject);
      await anOrder().forPet(petId).ownedBy(alice).cancelled('expired').saveIn(subject);
      expect(await orders.countOpenForPet(petId)).toBe(2);
      expect(await orders.countOpenForPet(petId, a.id)).toBe(1);
      expect(await orders.countOpenForPet(petId + 1000)).toBe(0);
      expect(await subject.openOrders.countForPet(petId)).toBe(2);
      expect(await subject.openOrders.countForPet(petId + 1000)).toBe(0);
    });

    it('lists by owner, pet, completeness and status (AND), in id order, a keyset page at a time', async () => {
      const otherPet = (await aPet().saveIn(subject)).pet.id;
      const a1 = await anOrder().forPet(petId).ownedBy(alice).saveIn(subject);
      const b1 = await anOrder().forPet(otherPet).ownedBy(bob).saveIn(subject);
      const a2 = await anOrder().forPet(otherPet).ownedBy(alice).completed().saveIn(subject);
      const b2 = await anOrder().forPet(petId).ownedBy(bob).cancelled().saveIn(subject);
      const a3 = await anOrder().forPet(petId).ownedBy(alice).cancelled('expired').saveIn(subject);
      const ids = (filter: Parameters<OrderRepository['list']>[0]) =>
        orders.list(filter, { limit: 10 }).then((page) => page.items.map((o) => o.id));
      expect(await ids({})).toEqual([a1.id, b1.id, a2.id, b2.id, a3.id]);
      expect(await ids({ ownerId: alice })).toEqual([a1.id, a2.id, a3.id]);
      expect(await ids({ petId: otherPet })).toEqual([b1.id, a2.id]);
      // `complete` is the specification's field: false is every order not fulfilled, withdrawn ones included.
      expect(await ids({ complete: false })).toEqual([a1.id, b1.id, b2.id, a3.id]);
      expect(await ids({ ownerId: alice, complete: true, petId: otherPet })).toEqual([a2.id]);
      expect(await ids({ status: ['placed'] })).toEqual([a1.id, b1.id]);
      expect(await ids({ status: ['cancelled', 'expired'] })).toEqual([b2.id, a3.id]);
      expect(await ids({ status: ['expired'], ownerId: bob })).toEqual([]);
      const first = await orders.list({}, { limit: 2 });
      expect(first.nextAfterId).toBe(b1.id);
      expect((await orders.list({}, { limit: 2, afterId: b1.id })).items.map((o) => o.id)).toEqual([a2.id, b2.id]);
    });

    it("locks an order only inside a unit of work; counts an owner's open units", async () => {
      const order = await anOrder().forPet(petId).ofQuantity(3).ownedBy(alice).saveIn(subject);
      await anOrder().forPet(petId).ofQuantity(4).ownedBy(alice).saveIn(subject);
      await anOrder().forPet(petId).ofQuantity(5).ownedBy(alice).completed().saveIn(subject);
      await anOrder().forPet(petId).ofQuantity(8).ownedBy(alice).cancelled().saveIn(subject);
      await anOrder().forPet(petId).ofQuantity(9).ownedBy(alice).cancelled('expired').saveIn(subject);
      await anOrder().forPet(petId).ofQuantity(6).ownedBy(bob).saveIn(subject);
      await expect(orders.lockById(order.id)).rejects.toThrow(/transaction/i);
      await subject.uow.run(async () => {
        expect((await orders.lockById(order.id))?.id).toBe(order.id);
        expect(await orders.lockById(order.id + 1000)).toBeNull();
      });
      expect(await orders.countOpenUnits(alice)).toBe(7);
      expect(await orders.countOpenUnits(bob)).toBe(6);
      expect(await orders.countOpenUnits(bob + 1000)).toBe(0);
    });

    it('lists the ids of open orders placed before a time, ascending, after an id, at most a limit', async () => {
      const a = await anOrder().forPet(petId).ownedBy(alice).saveIn(subject);
      await anOrder().forPet(petId).ownedBy(alice).completed().saveIn(subject);
      await anOrder().forPet(petId).ownedBy(alice).cancelled().saveIn(subject);
      await anOrder().forPet(petId).ownedBy(alice).cancelled('expired').saveIn(subject);
      const b = await anOrder().forPet(petId).ownedBy(bob).saveIn(subject);
      const c = await anOrder().forPet(petId).ownedBy(bob).saveIn(subject);
      expect(await orders.listOpenPlacedBefore(FAR_AHEAD, { limit: 10, afterId: 0 })).toEqual([a.id, b.id, c.id]);
      expect(await orders.listOpenPlacedBefore(FAR_AHEAD, { limit: 1, afterId: a.id })).toEqual([b.id]);
      expect(await orders.listOpenPlacedBefore(LONG_AGO, { limit: 10, afterId: 0 })).toEqual([]);
    });

    it('keeps a cancelled order as a record that no longer counts as open', async () => {
      const order = await anOrder().forPet(petId).ownedBy(alice).saveIn(subject);
      order.cancel(new Date('2026-02-05T00:00:00.000Z'));
      await orders.save(order);
      expect((await orders.findById(order.id))?.status).toBe('cancelled');
      expect(await orders.countOpenForPet(petId)).toBe(0);
    });

    it('keeps orders no longer open when their pet goes (petId null); refuses to orphan an open one', async () => {
      const { pet } = await aPet().saveIn(subject);
      const done = await anOrder().forPet(pet.id).ownedBy(alice).completed().saveIn(subject);
      const expired = await anOrder().forPet(pet.id).ownedBy(alice).cancelled('expired').saveIn(subject);
      const open = await anOrder().forPet(pet.id).ownedBy(alice).saveIn(subject);
      await expect(subject.pets.delete(pet.id)).rejects.toMatchObject({ constraintKind: 'check' });
      await expect(subject.pets.delete(pet.id)).rejects.toBeInstanceOf(ConstraintViolationError);
      open.cancel(new Date());
      await orders.save(open);
      expect(await subject.pets.delete(pet.id)).toBe(true);
      for (const kept of [done, expired, open]) expect((await orders.findById(kept.id))?.petId).toBeNull();
      expect((await orders.findById(open.id))?.status).toBe('cancelled');
      // What they show changed (no petId): so did their versions, the cancelled one's for the second time.
      const versions = [done, expired, open].map(async (kept) => (await orders.findById(kept.id))?.version);
      expect(await Promise.all(versions)).toEqual([2, 2, 3]);
    });

    it('rolls back a failed unit of work: a placed order and a completion are undone', async () => {
      const kept = await anOrder().forPet(petId).ownedBy(alice).saveIn(subject);
      let placed = 0;
      await expect(
        subject.uow.run(async () => {
          placed = await orders.nextId();
          await orders.add(Order.place({ id: placed, petId, quantity: 1, ownerId: bob, now: new Date() }));
          const open = (await orders.lockById(kept.id)) as Order;
          open.complete(new Date());
          await orders.save(open);
          throw new Error('the command failed');
        }),
      ).rejects.toThrow('the command failed');
      expect(await orders.findById(placed)).toBeNull();
      expect((await orders.findById(kept.id))?.isComplete).toBe(false);
    });
  });
}
