import { Stock, Pet, UnknownCategoryError } from '@petstore/domain';
import { CategoryRepository } from '../../src/category/category.repository';
import { StockRepository } from '../../src/stock/stock.repository';
import { PetRepository } from '../../src/stock/pet.repository';
import { UnitOfWork } from '../../src/ports';
import { StockLevels } from '../../src/stock/stock-levels';
import { aCategory, aPet } from '../builders/builders';

/** The catalogue's ports: pets, their stock entries, the stock levels read over both. */
export interface PetContractSubject {
  categories: CategoryRepository;
  pets: PetRepository;
  stocks: StockRepository;
  stockLevels: StockLevels;
  uow: UnitOfWork;
}

/**
 * The behaviour of PetRepository the use cases rely on, with the pet's stock entry where a pet's write reaches it
 * (created, deleted, rolled back, versioned with it), run against the in-memory fakes and the PostgreSQL
 * repositories. The stock entry's own behaviour is describeStockContract's. `makeRepo` gives a fresh, empty store
 * each test.
 */
export function describePetRepositoryContract(name: string, makeRepo: () => Promise<PetContractSubject>): void {
  describe(`PetRepository, StockRepository and StockLevels contract: ${name}`, () => {
    let subject: PetContractSubject;
    let pets: PetRepository;
    let stocks: StockRepository;
    let categoryId: number;
    /** A pet's stock entry, read the one way the port offers (locked, inside a unit of work). */
    const entryOf = (petId: number) => subject.uow.run(async () => (await stocks.lockWithPet(petId))?.stock ?? null);

    beforeEach(async () => {
      subject = await makeRepo();
      ({ pets, stocks } = subject);
      categoryId = (await aCategory().saveIn(subject)).id;
    });

    /** A new pet as the use case makes one: an id from `nextId()`, then `add`. */
    const addNew = async (input: Omit<Parameters<typeof Pet.create>[0], 'id' | 'now'>): Promise<Pet> => {
      const pet = Pet.create({ id: await pets.nextId(), ...input, now: new Date('2026-01-01T00:00:00.000Z') });
      await pets.add(pet);
      return pet;
    };

    it('inserts a pet with an id from a sequence, reads it back and updates it in place', async () => {
      const first = await addNew({ name: 'Rex', categoryId });
      const second = await addNew({ name: 'Tom', categoryId, status: 'pending' });
      expect(first.id).toBeGreaterThan(0);
      expect(second.id).toBeGreaterThan(first.id);
      expect((await pets.findById(first.id))?.toSnapshot()).toEqual({
        id: first.id,
        name: 'Rex',
        categoryId,
        status: 'available',
        createdAt: new Date('2026-01-01T00:00:00.000Z'),
        version: 1,
      });
      first.rename('Max');
      first.hold();
      await pets.save(first);
      // One update, one more version (the store keeps it: the pet's own is not written).
      expect((await pets.findById(first.id))?.toSnapshot()).toEqual({
        id: first.id,
        name: 'Max',
        categoryId,
        status: 'pending',
        createdAt: new Date('2026-01-01T00:00:00.000Z'),
        version: 2,
      });
      expect(await pets.findById(second.id + 1000)).toBeNull();
    });

    it('hands out new ids in ascending order; add refuses an id stored already, save an id not stored', async () => {
      const [first, second] = [await pets.nextId(), await pets.nextId()];
      expect(first).toBeGreaterThan(0);
      expect(second).toBeGreaterThan(first);
      const stored = await addNew({ name: 'Rex', categoryId });
      await expect(
        pets.add(Pet.create({ id: stored.id, name: 'Twin', categoryId, now: new Date() })),
      ).rejects.toMatchObject({
        kind: 'constraint_violation',
        constraintKind: 'unique',
      });
      await pets.save(Pet.create({ id: second, name: 'Never added', categoryId, now: new Date() }));
      expect(await pets.findById(second)).toBeNull();
      expect((await pets.list({}, { limit: 10 })).items.map((p) => p.name)).toEqual(['Rex']);
    });

    it('refuses a category that does not exist, on insert and on update, with UnknownCategoryError', async () => {
      await expect(addNew({ name: 'Ghost', categoryId: categoryId + 1000 })).rejects.toBeInstanceOf(
        UnknownCategoryError,
      );
      const pet = await addNew({ name: 'Mover', categoryId });
      pet.moveToCategory(categoryId + 1000);
      await expect(pets.save(pet)).rejects.toMatchObject({ kind: 'unknown_category' });
      expect((await pets.findById(pet.id))?.categoryId).toBe(categoryId);
    });

    it('lists with every filter given (AND), a keyset page at a time', async () => {
      const other = (await aCategory().saveIn(subject)).id;
      const rex = await addNew({ name: 'Rex', categoryId, status: 'available' });
      const rexy = await addNew({ name: 'T-REX', categoryId: other, status: 'pending' });
      const odd = await addNew({ name: '100%_sure', categoryId, status: 'sold' });
      const ids = (filter: Parameters<PetRepository['list']>[0]) =>
        pets.list(filter, { limit: 10 }).then((page) => page.items.map((p) => p.id));
      expect(await ids({})).toEqual([rex.id, rexy.id, odd.id]);
      expect(await ids({ nameContains: 'rEx' })).toEqual([rex.id, rexy.id]);
      expect(await ids({ nameContains: '%_' })).toEqual([odd.id]);
      expect(await ids({ nameContains: '_' })).toEqual([odd.id]);
      expect(await ids({ statuses: ['pending', 'sold'] })).toEqual([rexy.id, odd.id]);
      expect(await ids({ categoryId })).toEqual([rex.id, odd.id]);
      expect(await ids({ categoryId, nameContains: 'rex' })).toEqual([rex.id]);
      expect(await ids({ ids: [odd.id, rex.id] })).toEqual([rex.id, odd.id]);
      expect(await ids({ ids: [] })).toEqual([]);
      const first = await pets.list({}, { limit: 2 });
      expect(first.nextAfterId).toBe(rexy.id);
      expect(await pets.list({}, { limit: 2, afterId: rexy.id })).toEqual({
        items: [expect.objectContaining({ id: odd.id })],
        nextAfterId: null,
      });
    });

    it('deletes a pet with its stock entry: true once, false after', async () => {
      const { pet } = await aPet().inCategory(categoryId).saveIn(subject);
      expect(await pets.delete(pet.id)).toBe(true);
      expect(await pets.findById(pet.id)).toBeNull();
      expect(await entryOf(pet.id)).toBeNull();
      expect(await pets.delete(pet.id)).toBe(false);
    });

    it('locks only inside a unit of work, and finds nothing to lock for an unknown pet', async () => {
      const { pet } = await aPet().inCategory(categoryId).saveIn(subject);
      await expect(pets.lockById(pet.id)).rejects.toThrow(/transaction/i);
      await expect(stocks.lockWithPet(pet.id)).rejects.toThrow(/transaction/i);
      await subject.uow.run(async () => {
        expect((await pets.lockById(pet.id))?.id).toBe(pet.id);
        const locked = await stocks.lockWithPet(pet.id);
        expect([locked?.pet.toSnapshot(), locked?.stock.toSnapshot()]).toEqual([
          pet.toSnapshot(),
          { petId: pet.id, quantity: 1, version: 1 },
        ]);
        expect(await pets.lockById(pet.id + 1000)).toBeNull();
        expect(await stocks.lockWithPet(pet.id + 1000)).toBeNull();
      });
    });

    it('rolls back a failed unit of work: the pet, its entry and a stock change are all undone', async () => {
      const { pet: kept, stock } = await aPet().inCategory(categoryId).withStock(3).saveIn(subject);
      let created = 0;
      await expect(
        subject.uow.run(async () => {
          created = (await aPet().inCategory(categoryId).saveIn(subject)).pet.id;
          stock.restock(9);
          await stocks.save(stock);
          throw new Error('the command failed');
        }),
      ).rejects.toThrow('the command failed');
      expect(await pets.findById(created)).toBeNull();
      expect(await entryOf(created)).toBeNull();
      expect((await entryOf(kept.id))?.quantity).toBe(3);
    });

    it("keeps the versions: a pet's counts its name, category, status; its entry's its quantity, status", async () => {
      const { pet } = await aPet().inCategory(categoryId).withStock(2).saveIn(subject);
      const versions = async () => [
        (await pets.findById(pet.id))?.version,
        (await subject.stockLevels.find(pet.id))?.version,
        (await entryOf(pet.id))?.version,
      ];
      expect(await versions()).toEqual([1, 2, 2]);
      await pets.save(pet); // nothing changed: nothing counted
      expect(await versions()).toEqual([1, 2, 2]);
      pet.rename('Renamed');
      await pets.save(pet);
      expect(await versions()).toEqual([2, 2, 2]); // a name is not the entry's
      pet.hold();
      await pets.save(pet);
      expect(await versions()).toEqual([3, 3, 3]); // a status is the pet's and its entry's
      const entry = (await entryOf(pet.id)) as Stock;
      entry.restock(5);
      await stocks.save(entry);
      expect(await versions()).toEqual([3, 4, 4]);
      await stocks.save(entry); // the same count
      expect(await versions()).toEqual([3, 4, 4]);
    });
  });
}
