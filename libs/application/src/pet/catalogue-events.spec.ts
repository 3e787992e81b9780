import { Account, InvalidStatusTransitionError } from '@petstore/domain';
import { aCategory, anAccount, aPet, inMemoryPetstore, InMemoryPetstore } from '../../testing';
import { CreateCategory, DeleteCategory, UpdateCategory } from '../category/category.use-cases';
import { EventQueries } from '../events/event-log.use-cases';
import { EVERY_ACCOUNT } from '../events/event.ports';
import { SetStock } from '../stock/stock.use-cases';
import { CreatePet, DeletePet, UpdatePet } from './pet.use-cases';

/**
 * Which event each change of the catalogue records (in its own transaction, through EventRecorder), and who sees
 * them: every account, in `GET /events` (and through its webhook endpoints: webhook/catalogue-subscribers.spec.ts).
 */
describe('catalogue events (in-memory ports)', () => {
  let store: InMemoryPetstore;
  beforeEach(() => {
    store = inMemoryPetstore();
  });

  /** The events recorded so far, in order, with their owner and `data` (SummaryEventPayloads). */
  const recorded = () =>
    [...store.db.tables.webhookEvents.values()]
      .sort((a, b) => a.seq - b.seq)
      .map(({ type, subjectOwnerId, body }) => ({ type, subjectOwnerId, data: JSON.parse(body).data }));
  const types = () => recorded().map((event) => event.type);
  /** Forgets what the set-up recorded. */
  const clear = () => store.db.tables.webhookEvents.clear();

  const createPet = () => new CreatePet(store.uow, store.pets, store.stocks, store.clock, store.events);
  const updatePet = () => new UpdatePet(store.stockCommand);
  const deletePet = () => new DeletePet(store.uow, store.pets, store.openOrders, store.events);
  const setStock = () => new SetStock(store.stockCommand);
  /** The versions stored now: the pet's and its stock entry's. */
  const storedVersions = async (petId: number) => ({
    pet: (await store.pets.findById(petId))?.version,
    stock: (await store.stockLevels.find(petId))?.version,
  });

  describe('pets and their stock', () => {
    it('a new pet: pet.created, then inventory.changed with its first stock, for every account', async () => {
      const category = await aCategory().saveIn(store);
      const pet = await createPet().execute({ name: 'Rex', categoryId: category.id });
      expect(recorded()).toEqual([
        {
          type: 'pet.created',
          subjectOwnerId: EVERY_ACCOUNT,
          data: { id: pet.id, name: 'Rex', categoryId: category.id, status: 'available', version: 1 },
        },
        {
          type: 'inventory.changed',
          subjectOwnerId: EVERY_ACCOUNT,
          data: { petId: pet.id, quantity: 1, status: 'available', version: 1 },
        },
      ]);
    });

    it('a rename or a move to another category: pet.updated alone (the stock did not change)', async () => {
      const { pet } = await aPet().named('Rex').withStock(3).saveIn(store);
      const other = await aCategory().saveIn(store);
      await updatePet().execute({ id: pet.id, name: 'Max' });
      await updatePet().execute({ id: pet.id, categoryId: other.id });
      expect(recorded()).toEqual([
        {
          type: 'pet.updated',
          subjectOwnerId: EVERY_ACCOUNT,
          data: expect.objectContaining({ id: pet.id, name: 'Max' }),
        },
        { type: 'pet.updated', subjectOwnerId: EVERY_ACCOUNT, data: expect.objectContaining({ categoryId: other.id }) },
      ]);
      // Each carries the version the store gave its change: one more each, the last the one stored.
      expect(recorded().map((event) => event.data.version)).toEqual([2, 3]);
      expect(await storedVersions(pet.id)).toEqual({ pet: 3, stock: 2 });
    });

    it('a status change: pet.status_changed (kept for its consumers), pet.updated and inventory.changed', async () => {
      const { pet } = await aPet().available().withStock(2).saveIn(store);
      const before = await storedVersions(pet.id);
      await updatePet().execute({ id: pet.id, status: 'pending' });
      expect(types()).toEqual(['pet.status_changed', 'pet.updated', 'inventory.changed']);
      // The status is the pet's and its entry's (InventoryItem shows it): both versions one more, as stored.
      const after = await storedVersions(pet.id);
      expect(after).toEqual({ pet: (before.pet ?? 0) + 1, stock: (before.stock ?? 0) + 1 });
      expect(recorded()[2].data).toEqual({ petId: pet.id, quantity: 2, status: 'pending', version: after.stock });
      expect([recorded()[0].data.version, recorded()[1].data.version]).toEqual([after.pet, after.pet]);
    });

    it('→ sold empties the stock: the same three events, the stock at 0', async () => {
      const { pet } = await aPet().available().withStock(5).saveIn(store);
      const before = await storedVersions(pet.id);
      await updatePet().execute({ id: pet.id, status: 'sold' });
      expect(types()).toEqual(['pet.status_changed', 'pet.updated', 'inventory.changed']);
      // Its quantity and its status changed: the entry's version counts each.
      const version = (before.stock ?? 0) + 2;
      expect(recorded()[2].data).toEqual({ petId: pet.id, quantity: 0, status: 'sold', version });
      expect(await storedVersions(pet.id)).toEqual({ pet: (before.pet ?? 0) + 1, stock: version });
    });

    it('an update that changes nothing (the same name, status and category, or no field) records nothing', async () => {
      const { pet } = await aPet().named('Rex').available().withStock(2).saveIn(store);
      await updatePet().execute({ id: pet.id, name: 'Rex', status: 'available', categoryId: pet.categoryId });
      await updatePet().execute({ id: pet.id });
      expect(recorded()).toEqual([]);
    });

    it('a refused update records nothing', async () => {
      const { pet } = await aPet().pending().withStock(0).saveIn(store);
      await expect(updatePet().execute({ id: pet.id, name: 'Max', status: 'available' })).rejects.toBeInstanceOf(
        InvalidStatusTransitionError,
      );
      expect(recorded()).toEqual([]);
    });

    it('a restock: inventory.changed alone while the status stays; the same count again records nothing', async () => {
      const { pet } = await aPet().available().withStock(2).saveIn(store);
      const before = await storedVersions(pet.id);
      await setStock().execute({ petId: pet.id, quantity: 7 });
      await setStock().execute({ petId: pet.id, quantity: 7 });
      const version = (before.stock ?? 0) + 1;
      expect(recorded()).toEqual([
        {
          type: 'inventory.changed',
          subjectOwnerId: EVERY_ACCOUNT,
          data: { petId: pet.id, quantity: 7, status: 'available', version },
        },
      ]);
      expect(await storedVersions(pet.id)).toEqual({ pet: before.pet, stock: version });
    });

    it('a stock set to 0 that changes the status records the pet events too', async () => {
      const { pet } = await aPet().available().withStock(2).saveIn(store);
      await setStock().execute({ petId: pet.id, quantity: 0 });
      const [statusChanged, updated, inventory] = recorded();
      expect([statusChanged.type, updated.type, inventory.type]).toEqual([
        'pet.status_changed',
        'pet.updated',
        'inventory.changed',
      ]);
      const stored = await storedVersions(pet.id);
      expect(inventory.data).toEqual({
        petId: pet.id,
        quantity: 0,
        status: updated.data.status,
        version: stored.stock,
      });
      expect(updated.data.version).toBe(stored.pet);
      expect(updated.data.status).not.toBe('available');
    });

    it('a deletion: pet.deleted, the pet as it was', async () => {
      const { pet } = await aPet().named('Rex').saveIn(store);
      await deletePet().execute(pet.id);
      expect(recorded()).toEqual([
        {
          type: 'pet.deleted',
          subjectOwnerId: EVERY_ACCOUNT,
          data: { id: pet.id, name: 'Rex', categoryId: pet.categoryId, status: pet.status, version: pet.version },
        },
      ]);
    });
  });

  describe('categories', () => {
    const create = () => new CreateCategory(store.uow, store.categories, store.events);
    const update = () => new UpdateCategory(store.uow, store.categories, store.events);
    const remove = () => new DeleteCategory(store.uow, store.categories, store.events);

    it('created, renamed, described, deleted: one event each, for every account', async () => {
      const category = await create().execute({ name: 'Dogs' });
      await update().execute({ id: category.id, name: 'Hounds' });
      await update().execute({ id: category.id, description: 'Loyal' });
      await remove().execute(category.id);
      expect(recorded()).toEqual([
        {
          type: 'category.created',
          subjectOwnerId: EVERY_ACCOUNT,
          data: { id: category.id, name: 'Dogs', version: 1 },
        },
        {
          type: 'category.updated',
          subjectOwnerId: EVERY_ACCOUNT,
          data: { id: category.id, name: 'Hounds', version: 2 },
        },
        {
          type: 'category.updated',
          subjectOwnerId: EVERY_ACCOUNT,
          data: { id: category.id, name: 'Hounds', version: 3 },
        },
        // As it was: its last name and version.
        {
          type: 'category.deleted',
          subjectOwnerId: EVERY_ACCOUNT,
          data: { id: category.id, name: 'Hounds', version: 3 },
        },
      ]);
    });

    it('an update that changes nothing records nothing; a refused creation neither', async () => {
      const category = await aCategory().named('Cats').describedAs('Aloof').saveIn(store);
      await update().execute({ id: category.id, name: ' Cats ', description: 'Aloof' });
      await expect(create().execute({ name: 'cats' })).rejects.toMatchObject({ kind: 'category_name_taken' });
      expect(recorded()).toEqual([]);
    });
  });

  describe('who sees them', () => {
    let ada: Account;
    let admin: Account;
    beforeEach(async () => {
      ada = await anAccount().customer().saveIn(store);
      admin = await anAccount().admin().saveIn(store);
    });

    it("every customer sees the catalogue's events (not pet.status_changed), listed and by id", async () => {
      const { pet } = await aPet().named('Rex').available().withStock(2).saveIn(store);
      clear();
      await updatePet().execute({ id: pet.id, name: 'Max', status: 'pending' });
      await setStock().execute({ petId: pet.id, quantity: 4 });
      const queries = new EventQueries(store.eventLog);
      const listed = async (viewer: Account) =>
        (await queries.list(viewer, {}, { limit: 10 })).items.map((event) => event.type);
      const everything = await listed(admin);
      expect(everything).toContain('pet.status_changed');
      expect(everything.slice(-3)).toEqual(['inventory.changed', 'pet.updated', 'pet.status_changed']);
      expect(await listed(ada)).toEqual(everything.filter((type) => type !== 'pet.status_changed'));
      const filtered = await queries.list(ada, { types: ['pet.updated', 'pet.status_changed'] }, { limit: 10 });
      expect(filtered.items.map((event) => event.type)).toEqual(['pet.updated', 'pet.updated']);
      const [latest] = (await queries.list(ada, {}, { limit: 1 })).items;
      expect(await queries.get(latest.id, ada)).toMatchObject({ id: latest.id, type: 'inventory.changed' });
    });
  });
});
