import { CategoryInUseError, CategoryNameTakenError, CategoryNotFoundError, InvalidValueError } from '@petstore/domain';
import { aCategory, aPet, inMemoryPetstore, InMemoryPetstore } from '../../testing';
import { CategoryQueries, CreateCategory, DeleteCategory, UpdateCategory } from './category.use-cases';

describe('category use cases (in-memory ports)', () => {
  let store: InMemoryPetstore;
  beforeEach(() => (store = inMemoryPetstore()));

  describe('CreateCategory', () => {
    it('stores a trimmed name and the description, with a new id', async () => {
      const created = await new CreateCategory(store.uow, store.categories, store.events).execute({
        name: '  Dogs ',
        description: 'Loyal',
      });
      expect(created.toSnapshot()).toEqual({ id: expect.any(Number), name: 'Dogs', description: 'Loyal', version: 1 });
      expect(await store.categories.exists(created.id)).toBe(true);
    });

    it('refuses a name taken in another case, storing nothing', async () => {
      await aCategory().named('Dogs').saveIn(store);
      await expect(
        new CreateCategory(store.uow, store.categories, store.events).execute({ name: 'dOGS' }),
      ).rejects.toBeInstanceOf(CategoryNameTakenError);
      expect((await store.categories.list({ limit: 10 })).items).toHaveLength(1);
    });

    it('refuses a blank name before storing', async () => {
      // execute is not async: the domain's refusal is thrown before any promise exists.
      expect(() => new CreateCategory(store.uow, store.categories, store.events).execute({ name: '  ' })).toThrow(
        InvalidValueError,
      );
      expect((await store.categories.list({ limit: 10 })).items).toEqual([]);
    });
  });

  describe('UpdateCategory', () => {
    const update = () => new UpdateCategory(store.uow, store.categories, store.events);

    it('changes only what is given', async () => {
      const category = await aCategory().named('Cats').describedAs('Independent').saveIn(store);
      const renamed = await update().execute({ id: category.id, name: 'Felines' });
      expect((await store.categories.findById(category.id))?.toSnapshot()).toEqual({
        id: category.id,
        name: 'Felines',
        description: 'Independent',
        version: 2,
      });
      // The version the store gave the change is the one the use case returns (and its event carries).
      expect(renamed.version).toBe(2);
      await update().execute({ id: category.id, description: null });
      expect((await store.categories.findById(category.id))?.description).toBeNull();
      // A change that changes nothing writes nothing: the version stays.
      expect((await update().execute({ id: category.id, name: 'Felines' })).version).toBe(3);
      expect((await store.categories.findById(category.id))?.version).toBe(3);
    });

    it('refuses an unknown id with CategoryNotFoundError', async () => {
      await expect(update().execute({ id: 404, name: 'X' })).rejects.toBeInstanceOf(CategoryNotFoundError);
    });

    it('refuses a name another category has (any case) and keeps the old one', async () => {
      await aCategory().named('Birds').saveIn(store);
      const fish = await aCategory().named('Fish').saveIn(store);
      await expect(update().execute({ id: fish.id, name: 'BIRDS' })).rejects.toBeInstanceOf(CategoryNameTakenError);
      expect((await store.categories.findById(fish.id))?.name).toBe('Fish');
    });

    it('refuses an invalid description, changing nothing', async () => {
      const category = await aCategory().named('Ants').describedAs('Small').saveIn(store);
      await expect(
        update().execute({ id: category.id, name: 'Bees', description: 'x'.repeat(1001) }),
      ).rejects.toMatchObject({
        field: 'description',
      });
      expect((await store.categories.findById(category.id))?.toSnapshot()).toMatchObject({
        name: 'Ants',
        description: 'Small',
      });
    });
  });

  describe('DeleteCategory', () => {
    it('deletes an unused category', async () => {
      const category = await aCategory().saveIn(store);
      await new DeleteCategory(store.uow, store.categories, store.events).execute(category.id);
      expect(await store.categories.exists(category.id)).toBe(false);
    });

    it('refuses an unknown id with CategoryNotFoundError', async () => {
      await expect(new DeleteCategory(store.uow, store.categories, store.events).execute(404)).rejects.toBeInstanceOf(
        CategoryNotFoundError,
      );
    });

    it('refuses a category that still has pets (category_in_use)', async () => {
      const category = await aCategory().saveIn(store);
      await aPet().inCategory(category.id).saveIn(store);
      await expect(
        new DeleteCategory(store.uow, store.categories, store.events).execute(category.id),
      ).rejects.toBeInstanceOf(CategoryInUseError);
      expect(await store.categories.exists(category.id)).toBe(true);
    });
  });

  describe('CategoryQueries', () => {
    it('gets one by id, and refuses an unknown one', async () => {
      const category = await aCategory().named('Rabbits').saveIn(store);
      const queries = new CategoryQueries(store.categories);
      expect((await queries.get(category.id)).name).toBe('Rabbits');
      await expect(queries.get(category.id + 1)).rejects.toBeInstanceOf(CategoryNotFoundError);
    });

    it('lists a keyset page', async () => {
      const a = await aCategory().saveIn(store);
      const b = await aCategory().saveIn(store);
      const page = await new CategoryQueries(store.categories).list({ limit: 1 });
      expect(page).toEqual({ items: [expect.objectContaining({ id: a.id })], nextAfterId: a.id });
      expect(
        (await new CategoryQueries(store.categories).list({ limit: 5, afterId: a.id })).items.map((c) => c.id),
      ).toEqual([b.id]);
    });
  });
});
