import { aCategory, aPet, describeOrderRepositoryContract } from '@petstore/application/testing';
import { Order, Pet, PetStatus } from '@petstore/domain';
import { resetDatabase } from '@petstore/testing';
import { newAccountId, PgRepositories, pgRepositories, useTestDatabase } from '../../../test/support/real-database';
import { PgPetRepository } from '../pet/pg-pet.repository';
import { PgStockLevels } from '../stock/pg-stock-levels.repository';
import { PgOrderRepository } from './pg-order.repository';

describe('PgOrderRepository and PgStockLevels (real database)', () => {
  const db = useTestDatabase({ reset: true });
  let repositories: PgRepositories;
  let pets: PgPetRepository;
  let orders: PgOrderRepository;
  let levels: PgStockLevels;
  let categoryId: number;
  let alice: number;
  let bob: number;
  const now = new Date('2026-11-21T10:00:00.000Z');

  beforeAll(async () => {
    repositories = pgRepositories(db.host);
    ({ pets, orders, stockLevels: levels } = repositories);
    categoryId = (await aCategory().named('Fish').saveIn(repositories)).id;
    alice = await newAccountId(repositories.accounts);
    bob = await newAccountId(repositories.accounts);
  });

  /** A pet of the category with its stock entry: `quantity` units if given, else a new pet's. */
  const newPet = async (status: PetStatus = 'available', quantity?: number): Promise<Pet> => {
    const pet = aPet().named('Nemo').inCategory(categoryId).withStatus(status);
    return (await (quantity === undefined ? pet : pet.withStock(quantity)).saveIn(repositories)).pet;
  };
  const place = async (petId: number, ownerId: number, quantity = 1): Promise<Order> => {
    const order = Order.place({ id: await orders.nextId(), petId, quantity, ownerId, now, shipDate: null });
    await orders.add(order);
    return order;
  };

  it('inserts an order (id from the sequence), reads it back, and updates only what may change', async () => {
    const pet = await newPet('available', 5);
    const order = await place(pet.id, alice, 2);
    expect(order.id).toBeGreaterThan(0);
    expect((await orders.findById(order.id))?.toSnapshot()).toEqual({
      version: 1,
      id: order.id,
      petId: pet.id,
      quantity: 2,
      shipDate: null,
      status: 'placed',
      createdAt: now,
      statusChangedAt: now,
      ownerId: alice,
    });
    order.complete(now);
    await orders.save(order);
    expect((await orders.findById(order.id))?.toSnapshot()).toEqual(
      expect.objectContaining({ status: 'completed', shipDate: now, version: 2 }),
    );
    // The specification's `complete` column follows the status.
    const [row] = await db.dataSource.query(`SELECT complete FROM orders WHERE id = $1`, [order.id]);
    expect(row.complete).toBe(true);
    expect(await orders.findById(987654)).toBeNull();
  });

  it('counts the open orders of a pet, optionally leaving one out', async () => {
    const pet = await newPet('available', 5);
    const a = await place(pet.id, alice);
    await place(pet.id, bob);
    const done = await place(pet.id, bob);
    done.complete(now);
    await orders.save(done);
    expect(await orders.countOpenForPet(pet.id)).toBe(2);
    expect(await orders.countOpenForPet(pet.id, a.id)).toBe(1);
    expect(await orders.countOpenForPet(987654)).toBe(0);
  });

  it('lists in id order, by owner, pet and completeness, one keyset page at a time', async () => {
    const pet = await newPet('available', 10);
    const other = await newPet('available', 10);
    const mine = [await place(pet.id, alice), await place(other.id, alice), await place(pet.id, alice)];
    await place(pet.id, bob);
    mine[1].complete(now);
    await orders.save(mine[1]);

    const ids = async (filter: Parameters<typeof orders.list>[0], limit = 100, afterId?: number) =>
      (await orders.list(filter, { limit, afterId })).items.map((o) => o.id);
    const byAlice = (await ids({ ownerId: alice })).filter((id) => id >= mine[0].id);
    expect(byAlice).toEqual(mine.map((o) => o.id));
    expect(await ids({ ownerId: alice, petId: pet.id })).toEqual([mine[0].id, mine[2].id]);
    expect(await ids({ ownerId: alice, petId: other.id })).toEqual([mine[1].id]);
    expect(await ids({ ownerId: alice, petId: other.id, complete: false })).toEqual([]);
    expect(await ids({ petId: pet.id })).toHaveLength(3);

    const first = await orders.list({ petId: pet.id }, { limit: 2 });
    expect(first.items).toHaveLength(2);
    expect(first.nextAfterId).toBe(first.items[1].id);
    const second = await orders.list({ petId: pet.id }, { limit: 2, afterId: first.nextAfterId ?? undefined });
    expect(second.items).toHaveLength(1);
    expect(second.nextAfterId).toBeNull();
  });

  it('locks an order only inside a transaction, and keeps a cancelled one', async () => {
    const pet = await newPet('available', 3);
    const order = await place(pet.id, alice);
    await expect(orders.lockById(order.id)).rejects.toThrow(/transaction/);
    const locked = await db.host.transaction(() => orders.lockById(order.id));
    expect(locked?.id).toBe(order.id);
    order.cancel(new Date('2026-11-21T10:05:00.000Z'));
    await orders.save(order);
    expect((await orders.findById(order.id))?.toSnapshot()).toMatchObject({
      status: 'cancelled',
      statusChangedAt: new Date('2026-11-21T10:05:00.000Z'),
    });
  });

  it('lets the database refuse an unknown status, and a `complete` that disagrees with the status', async () => {
    const pet = await newPet('available', 3);
    const order = await place(pet.id, alice);
    await expect(db.dataSource.query(`UPDATE orders SET status = 'lost' WHERE id = $1`, [order.id])).rejects.toThrow(
      /orders_status_ck/,
    );
    await expect(db.dataSource.query(`UPDATE orders SET complete = true WHERE id = $1`, [order.id])).rejects.toThrow(
      /orders_complete_status_ck/,
    );
  });

  it('a completed order outlives its deleted pet (petId null); the database will not orphan an open one', async () => {
    const pet = await newPet('available', 3);
    const done = await place(pet.id, alice);
    done.complete(now);
    await orders.save(done);
    expect(await pets.delete(pet.id)).toBe(true);
    expect((await orders.findById(done.id))?.petId).toBeNull();

    const held = await newPet('available', 3);
    const open = await place(held.id, alice);
    await expect(pets.delete(held.id)).rejects.toMatchObject({
      constraintKind: 'check',
      constraint: 'orders_open_has_pet_ck',
    });
    expect((await orders.findById(open.id))?.petId).toBe(held.id);
  });

  it('lets the database refuse quantities out of range and unknown owners', async () => {
    const pet = await newPet('available', 3);
    for (const [quantity, owner] of [
      [0, alice],
      [1001, alice],
      [1, 987654],
    ]) {
      await expect(
        db.dataSource.query(
          `INSERT INTO orders (pet_id, owner_id, quantity, status, status_changed_at)
                          VALUES ($1, $2, $3, 'placed', now())`,
          [pet.id, owner, quantity],
        ),
      ).rejects.toBeDefined();
    }
  });

  it("counts an owner's open units, and lists open orders placed before a time", async () => {
    const pet = await newPet('available', 50);
    const carol = await newAccountId(repositories.accounts);
    const held = [await place(pet.id, carol, 3), await place(pet.id, carol, 4), await place(pet.id, carol, 5)];
    held[2].complete(now);
    await orders.save(held[2]);
    expect(await orders.countOpenUnits(carol)).toBe(7);
    expect(await orders.countOpenUnits(987654)).toBe(0);

    await db.dataSource.query(`UPDATE orders SET created_at = $2 WHERE id = $1`, [
      held[0].id,
      new Date('2026-01-01T00:00Z'),
    ]);
    await db.dataSource.query(`UPDATE orders SET created_at = $2 WHERE id = $1`, [
      held[2].id,
      new Date('2026-01-01T00:00Z'),
    ]);
    const before = new Date('2026-01-02T00:00Z');
    const open = await orders.listOpenPlacedBefore(before, { limit: 100, afterId: 0 });
    expect(open).toContain(held[0].id);
    expect(open).not.toContain(held[1].id);
    expect(open).not.toContain(held[2].id);
    expect(await orders.listOpenPlacedBefore(before, { limit: 100, afterId: held[0].id })).toEqual([]);
  });

  it("reads stock levels with their pet's status, filtered by status, in pet id order", async () => {
    await resetDatabase(db.dataSource);
    categoryId = (await aCategory().named('Birds').saveIn(repositories)).id;
    const a = await newPet('available', 4);
    const b = await newPet('pending');
    const c = await newPet('sold');
    // Made with 1 unit, then set to 4: one change of the entry.
    expect(await levels.find(a.id)).toEqual({ petId: a.id, quantity: 4, status: 'available', version: 2 });
    expect(await levels.find(987654)).toBeNull();
    expect((await levels.list({}, { limit: 10 })).items.map((l) => l.petId)).toEqual([a.id, b.id, c.id]);
    expect((await levels.list({ statuses: ['pending', 'sold'] }, { limit: 10 })).items).toEqual([
      { petId: b.id, quantity: 0, status: 'pending', version: 1 },
      { petId: c.id, quantity: 0, status: 'sold', version: 1 },
    ]);
    const page = await levels.list({}, { limit: 2 });
    expect(page.nextAfterId).toBe(b.id);
    expect((await levels.list({}, { limit: 2, afterId: b.id })).items.map((l) => l.petId)).toEqual([c.id]);
  });
});

describe('PgOrderRepository contract run (real database)', () => {
  const db = useTestDatabase();

  describeOrderRepositoryContract('PostgreSQL', async () => {
    await resetDatabase(db.dataSource);
    const repositories = pgRepositories(db.host);
    return { ...repositories, newAccountId: () => newAccountId(repositories.accounts) };
  });
});
