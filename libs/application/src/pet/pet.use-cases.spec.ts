import {
  InvalidStatusTransitionError,
  InvalidValueError,
  PetHasOpenOrdersError,
  PetNotFoundError,
  UnknownCategoryError,
} from '@petstore/domain';
import { aCategory, anAccount, anOrder, aPet, inMemoryPetstore, InMemoryPetstore } from '../../testing';
import { SetStock, StockQueries } from '../stock/stock.use-cases';
import { CreatePet, DeletePet, PetQueries, UpdatePet } from './pet.use-cases';

describe('pet and stock use cases (in-memory ports)', () => {
  let store: InMemoryPetstore;
  let customerId: number;
  beforeEach(async () => {
    store = inMemoryPetstore();
    customerId = (await anAccount().saveIn(store)).id;
  });

  const stockOf = async (petId: number) => (await store.stocks.findByPetId(petId))?.quantity;
  const statusOf = async (petId: number) => (await store.pets.findById(petId))?.status;

  describe('CreatePet', () => {
    const create = () => new CreatePet(store.uow, store.pets, store.stocks, store.clock, store.events);

    it.each([
      ['available', 1],
      ['pending', 0],
      ['sold', 0],
    ] as const)('creates a %s pet with its stock entry of %i unit(s)', async (status, quantity) => {
      const category = await aCategory().saveIn(store);
      const pet = await create().execute({ name: ' Rex ', categoryId: category.id, status });
      expect(pet.toSnapshot()).toEqual({
        id: expect.any(Number),
        name: 'Rex',
        categoryId: category.id,
        status,
        createdAt: store.clock.now(),
        version: 1,
      });
      expect(await stockOf(pet.id)).toBe(quantity);
      expect((await store.stocks.findByPetId(pet.id))?.version).toBe(1);
    });

    it('defaults to available', async () => {
      const category = await aCategory().saveIn(store);
      expect((await create().execute({ name: 'Tom', categoryId: category.id })).status).toBe('available');
    });

    it('refuses an unknown category (unknown_category) and stores nothing', async () => {
      await expect(create().execute({ name: 'Ghost', categoryId: 99 })).rejects.toBeInstanceOf(UnknownCategoryError);
      expect((await store.pets.list({}, { limit: 10 })).items).toEqual([]);
    });

    it('refuses an invalid name before touching the store', async () => {
      expect(() => create().execute({ name: '', categoryId: 1 })).toThrow(InvalidValueError);
    });
  });

  describe('UpdatePet', () => {
    const update = () => new UpdatePet(store.stockCommand);

    it('renames and moves to another category, keeping the stock', async () => {
      const { pet } = await aPet().named('Rex').withStock(3).saveIn(store);
      const other = await aCategory().saveIn(store);
      const updated = await update().execute({ id: pet.id, name: 'Max', categoryId: other.id });
      expect(updated.toSnapshot()).toMatchObject({ name: 'Max', categoryId: other.id, status: 'available' });
      expect((await store.pets.findById(pet.id))?.name).toBe('Max');
      expect(await stockOf(pet.id)).toBe(3);
    });

    it('refuses an unknown pet with PetNotFoundError', async () => {
      await expect(update().execute({ id: 404, name: 'X' })).rejects.toBeInstanceOf(PetNotFoundError);
    });

    it('refuses an unknown category and rolls the rename back with it', async () => {
      const { pet } = await aPet().named('Rex').saveIn(store);
      await expect(update().execute({ id: pet.id, name: 'Max', categoryId: 999 })).rejects.toBeInstanceOf(
        UnknownCategoryError,
      );
      expect((await store.pets.findById(pet.id))?.toSnapshot()).toEqual(pet.toSnapshot());
    });

    it('→ sold empties the stock', async () => {
      const { pet } = await aPet().available().withStock(5).saveIn(store);
      expect((await update().execute({ id: pet.id, status: 'sold' })).status).toBe('sold');
      expect(await stockOf(pet.id)).toBe(0);
    });

    it('refuses → sold while an order is open, changing nothing (name included)', async () => {
      const { pet } = await aPet().named('Rex').available().withStock(2).saveIn(store);
      await anOrder().forPet(pet.id).ownedBy(customerId).saveIn(store);
      const refused = update().execute({ id: pet.id, name: 'Max', status: 'sold' });
      await expect(refused).rejects.toBeInstanceOf(InvalidStatusTransitionError);
      expect((await store.pets.findById(pet.id))?.toSnapshot()).toMatchObject({ name: 'Rex', status: 'available' });
      expect(await stockOf(pet.id)).toBe(2);
    });

    it('→ pending is a hold (stock kept); a sold pet cannot be held', async () => {
      const { pet } = await aPet().available().withStock(2).saveIn(store);
      expect((await update().execute({ id: pet.id, status: 'pending' })).status).toBe('pending');
      expect(await stockOf(pet.id)).toBe(2);
      const { pet: sold } = await aPet().sold().saveIn(store);
      await expect(update().execute({ id: sold.id, status: 'pending' })).rejects.toMatchObject({
        kind: 'invalid_status_transition',
      });
    });

    it('→ available needs units in stock', async () => {
      const { pet: empty } = await aPet().pending().withStock(0).saveIn(store);
      await expect(update().execute({ id: empty.id, status: 'available' })).rejects.toBeInstanceOf(
        InvalidStatusTransitionError,
      );
      expect(await statusOf(empty.id)).toBe('pending');
      const { pet: stocked } = await aPet().pending().withStock(1).saveIn(store);
      expect((await update().execute({ id: stocked.id, status: 'available' })).status).toBe('available');
    });
  });

  describe('DeletePet', () => {
    const remove = () => new DeletePet(store.uow, store.pets, store.openOrders, store.events);

    it('deletes the pet and its stock entry; completed orders stay, without their pet', async () => {
      const { pet } = await aPet().saveIn(store);
      const done = await anOrder().forPet(pet.id).ownedBy(customerId).completed().saveIn(store);
      await remove().execute(pet.id);
      expect(await store.pets.findById(pet.id)).toBeNull();
      expect(await stockOf(pet.id)).toBeUndefined();
      expect((await store.orders.findById(done.id))?.petId).toBeNull();
    });

    it('refuses an unknown pet with PetNotFoundError', async () => {
      await expect(remove().execute(404)).rejects.toBeInstanceOf(PetNotFoundError);
    });

    it('refuses a pet with open orders (pet_has_open_orders) and keeps it', async () => {
      const { pet } = await aPet().withStock(3).saveIn(store);
      await anOrder().forPet(pet.id).ownedBy(customerId).saveIn(store);
      await anOrder().forPet(pet.id).ownedBy(customerId).saveIn(store);
      await expect(remove().execute(pet.id)).rejects.toEqual(new PetHasOpenOrdersError(pet.id, 2));
      expect(await store.pets.findById(pet.id)).not.toBeNull();
    });
  });

  describe('PetQueries', () => {
    it('gets a pet, refuses an unknown one, and lists with a filter', async () => {
      const { pet } = await aPet().named('Rex').saveIn(store);
      await aPet().named('Tom').pending().saveIn(store);
      const queries = new PetQueries(store.pets);
      expect((await queries.get(pet.id)).name).toBe('Rex');
      await expect(queries.get(404)).rejects.toBeInstanceOf(PetNotFoundError);
      const page = await queries.list({ statuses: ['available'] }, { limit: 10 });
      expect(page.items.map((p) => p.name)).toEqual(['Rex']);
    });
  });

  describe('SetStock', () => {
    const setStock = () => new SetStock(store.stockCommand);

    it('above 0 makes any pet available', async () => {
      const { pet } = await aPet().sold().saveIn(store);
      const before = (await store.stockLevels.find(pet.id))?.version ?? 0;
      // Its quantity and its pet's status changed: each counts once in the entry's version.
      expect(await setStock().execute({ petId: pet.id, quantity: 7 })).toEqual({
        petId: pet.id,
        quantity: 7,
        status: 'available',
        version: before + 2,
      });
      expect(await store.stockLevels.find(pet.id)).toMatchObject({ version: before + 2 });
      expect(await statusOf(pet.id)).toBe('available');
      expect(await stockOf(pet.id)).toBe(7);
    });

    it('0 sells an available pet without open orders', async () => {
      const { pet } = await aPet().available().withStock(4).saveIn(store);
      expect((await setStock().execute({ petId: pet.id, quantity: 0 })).status).toBe('sold');
    });

    it('0 puts an available pet with open orders on hold (pending)', async () => {
      const { pet } = await aPet().available().withStock(4).saveIn(store);
      await anOrder().forPet(pet.id).ownedBy(customerId).saveIn(store);
      const before = (await store.stockLevels.find(pet.id))?.version ?? 0;
      expect(await setStock().execute({ petId: pet.id, quantity: 0 })).toEqual({
        petId: pet.id,
        quantity: 0,
        status: 'pending',
        version: before + 2,
      });
    });

    it('0 leaves a pending pet pending', async () => {
      const { pet } = await aPet().pending().withStock(2).saveIn(store);
      expect((await setStock().execute({ petId: pet.id, quantity: 0 })).status).toBe('pending');
    });

    it('refuses an unknown pet and a quantity out of range, changing nothing', async () => {
      await expect(setStock().execute({ petId: 404, quantity: 1 })).rejects.toBeInstanceOf(PetNotFoundError);
      const { pet } = await aPet().withStock(2).saveIn(store);
      await expect(setStock().execute({ petId: pet.id, quantity: -1 })).rejects.toMatchObject({ field: 'quantity' });
      await expect(setStock().execute({ petId: pet.id, quantity: 1.5 })).rejects.toBeInstanceOf(InvalidValueError);
      expect(await stockOf(pet.id)).toBe(2);
    });
  });

  describe('StockQueries', () => {
    it("reads a pet's stock level, refuses an unknown pet, lists by status", async () => {
      const { pet } = await aPet().withStock(3).saveIn(store);
      const { pet: held } = await aPet().pending().saveIn(store);
      const queries = new StockQueries(store.stockLevels);
      const version = (await store.stocks.findByPetId(pet.id))?.version;
      expect(await queries.get(pet.id)).toEqual({ petId: pet.id, quantity: 3, status: 'available', version });
      await expect(queries.get(404)).rejects.toBeInstanceOf(PetNotFoundError);
      expect((await queries.list({ statuses: ['pending'] }, { limit: 10 })).items).toEqual([
        { petId: held.id, quantity: 0, status: 'pending', version: 1 },
      ]);
    });
  });
});
