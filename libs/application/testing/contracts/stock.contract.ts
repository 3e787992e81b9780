import { Stock } from '@petstore/domain';
import { CategoryRepository } from '../../src/category/category.repository';
import { ConstraintViolationError, UnitOfWork } from '../../src/ports';
import { PetRepository } from '../../src/stock/pet.repository';
import { StockLevels } from '../../src/stock/stock-levels';
import { StockRepository } from '../../src/stock/stock.repository';
import { aCategory, aPet } from '../builders/builders';

/** What the stock contract needs: the stock ports, and the pets and categories their entries belong to. */
export interface StockContractSubject {
  categories: CategoryRepository;
  pets: PetRepository;
  stocks: StockRepository;
  stockLevels: StockLevels;
  uow: UnitOfWork;
}

/**
 * The behaviour of StockRepository (a pet's stock entry, locked with its pet) and StockLevels (the entries read with
 * their pet's status) that the stock commands and the inventory rely on, run against the in-memory fakes
 * (libs/application) and the PostgreSQL repositories (libs/infrastructure). `makeRepo` gives a fresh, empty store
 * each test. What a pet's own writes do to its entry (created, deleted, versioned with it) is the pet contract's.
 */
export function describeStockContract(name: string, makeRepo: () => Promise<StockContractSubject>): void {
  describe(`StockRepository and StockLevels contract: ${name}`, () => {
    let subject: StockContractSubject;
    let stocks: StockRepository;
    let categoryId: number;
    /** A pet's stock entry, read the one way the port offers (locked, inside a unit of work). */
    const entryOf = (petId: number) => subject.uow.run(async () => (await stocks.lockWithPet(petId))?.stock ?? null);

    beforeEach(async () => {
      subject = await makeRepo();
      ({ stocks } = subject);
      categoryId = (await aCategory().saveIn(subject)).id;
    });

    it('keeps one stock entry per pet: create, find, save', async () => {
      const { pet } = await aPet().pending().inCategory(categoryId).saveIn(subject);
      expect((await entryOf(pet.id))?.toSnapshot()).toEqual({ petId: pet.id, quantity: 0, version: 1 });
      const item = (await entryOf(pet.id)) as Stock;
      item.restock(42);
      await stocks.save(item);
      expect((await entryOf(pet.id))?.quantity).toBe(42);
      expect(await entryOf(pet.id + 1000)).toBeNull();
    });

    it('refuses a second entry for a pet, an entry without a pet, saving a missing entry', async () => {
      const { pet } = await aPet().inCategory(categoryId).saveIn(subject);
      await expect(stocks.create(Stock.forNewPet(pet))).rejects.toMatchObject({ constraintKind: 'unique' });
      const orphan = Stock.restore({ petId: pet.id + 1000, quantity: 1, version: 1 });
      await expect(stocks.create(orphan)).rejects.toBeInstanceOf(ConstraintViolationError);
      await expect(stocks.create(orphan)).rejects.toMatchObject({ constraintKind: 'foreign_key' });
      await expect(stocks.save(orphan)).rejects.toThrow(/no stock entry/);
    });

    it("reads stock levels with their pet's status, filtered by status, a keyset page at a time", async () => {
      const { pet: a } = await aPet().inCategory(categoryId).withStock(4).saveIn(subject);
      const { pet: b } = await aPet().pending().inCategory(categoryId).saveIn(subject);
      const { pet: c } = await aPet().sold().inCategory(categoryId).saveIn(subject);
      // a's entry was made with 1 unit, then set to 4: one change.
      const level = { petId: a.id, quantity: 4, status: 'available', version: 2 };
      expect(await subject.stockLevels.find(a.id)).toEqual(level);
      expect(await subject.stockLevels.find(c.id + 1000)).toBeNull();
      const page = await subject.stockLevels.list({ statuses: ['pending', 'sold'] }, { limit: 1 });
      const pending = { petId: b.id, quantity: 0, status: 'pending', version: 1 };
      expect(page).toEqual({ items: [pending], nextAfterId: b.id });
      const rest = await subject.stockLevels.list({ statuses: ['pending', 'sold'] }, { limit: 1, afterId: b.id });
      expect(rest).toEqual({ items: [{ petId: c.id, quantity: 0, status: 'sold', version: 1 }], nextAfterId: null });
    });

    it('lists every entry without a status filter, ascending by pet id; an empty page past the last', async () => {
      const { pet: a } = await aPet().inCategory(categoryId).withStock(2).saveIn(subject);
      const { pet: b } = await aPet().sold().inCategory(categoryId).saveIn(subject);
      const all = await subject.stockLevels.list({}, { limit: 10 });
      expect(all.items.map((level) => [level.petId, level.quantity, level.status])).toEqual([
        [a.id, 2, 'available'],
        [b.id, 0, 'sold'],
      ]);
      expect(all.nextAfterId).toBeNull();
      const past = await subject.stockLevels.list({}, { limit: 10, afterId: b.id });
      expect(past).toEqual({ items: [], nextAfterId: null });
    });

    it('locks the pet with its entry inside a unit of work only; null for an unknown pet', async () => {
      const { pet } = await aPet().inCategory(categoryId).withStock(3).saveIn(subject);
      await expect(stocks.lockWithPet(pet.id)).rejects.toThrow(/transaction/i);
      await subject.uow.run(async () => {
        const locked = await stocks.lockWithPet(pet.id);
        expect(locked?.pet.toSnapshot()).toEqual((await subject.pets.findById(pet.id))?.toSnapshot());
        expect(locked?.stock.toSnapshot()).toEqual({ petId: pet.id, quantity: 3, version: 2 });
        expect(await stocks.lockWithPet(pet.id + 1000)).toBeNull();
      });
    });

    it('hands back copies: a locked entry changed is not stored until it is saved', async () => {
      const { pet } = await aPet().inCategory(categoryId).withStock(5).saveIn(subject);
      await subject.uow.run(async () => {
        (await stocks.lockWithPet(pet.id))?.stock.take(2);
      });
      expect((await entryOf(pet.id))?.quantity).toBe(5);
      expect((await subject.stockLevels.find(pet.id))?.quantity).toBe(5);
    });

    it("a failed unit of work leaves the entry's quantity and version as they were", async () => {
      const { pet } = await aPet().inCategory(categoryId).withStock(5).saveIn(subject);
      const before = await subject.stockLevels.find(pet.id);
      await expect(
        subject.uow.run(async () => {
          const locked = await stocks.lockWithPet(pet.id);
          locked?.stock.take(5);
          await stocks.save(locked?.stock as Stock);
          expect((await subject.stockLevels.find(pet.id))?.quantity).toBe(0);
          throw new Error('the command failed');
        }),
      ).rejects.toThrow('the command failed');
      expect(await subject.stockLevels.find(pet.id)).toEqual(before);
    });
  });
}
