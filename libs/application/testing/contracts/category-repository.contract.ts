import { Category, CategoryInUseError, CategoryNameTakenError } from '@petstore/domain';
import { CategoryRepository } from '../../src/category/category.repository';
import { StockRepository } from '../../src/stock/stock.repository';
import { PetRepository } from '../../src/stock/pet.repository';
import { UnitOfWork } from '../../src/ports';
import { aCategory, aPet } from '../builders/builders';

/** What the category contract needs: the repository, a pet repository to use a category, a unit of work. */
export interface CategoryContractSubject {
  categories: CategoryRepository;
  pets: PetRepository;
  stocks: StockRepository;
  uow: UnitOfWork;
}

/**
 * The behaviour of a CategoryRepository the use cases rely on. Run against the in-memory fake
 * (libs/application) and the repository on PostgreSQL (libs/infrastructure): `makeRepo` gives
 * a fresh, empty store before each test.
 */
export function describeCategoryRepositoryContract(
  name: string,
  makeRepo: () => Promise<CategoryContractSubject>,
): void {
  describe(`CategoryRepository contract: ${name}`, () => {
    let subject: CategoryContractSubject;
    let categories: CategoryRepository;

    beforeEach(async () => {
      subject = await makeRepo();
      categories = subject.categories;
    });

    /** A new category as the use case makes one: an id from `nextId()`, then `add`. */
    const addNew = async (input: { name: string; description?: string }): Promise<Category> => {
      const category = Category.create({ id: await categories.nextId(), ...input });
      await categories.add(category);
      return category;
    };

    it('inserts with an id from a sequence, reads back, tells whether one exists', async () => {
      const first = await addNew({ name: 'Dogs', description: 'Loyal' });
      const second = await addNew({ name: 'Cats' });
      expect(first.id).toBeGreaterThan(0);
      expect(second.id).toBeGreaterThan(first.id);
      expect((await categories.findById(first.id))?.toSnapshot()).toEqual({
        id: first.id,
        name: 'Dogs',
        description: 'Loyal',
        version: 1,
      });
      expect(await categories.findById(second.id)).not.toBeNull();
      expect(await categories.findById(second.id + 1000)).toBeNull();
      expect(await categories.findById(second.id + 1000)).toBeNull();
    });

    it('locks only inside a unit of work, and finds nothing to lock for an unknown id', async () => {
      const category = await addNew({ name: 'Lockable', description: 'held' });
      await expect(categories.lockById(category.id)).rejects.toThrow(/transaction/i);
      await subject.uow.run(async () => {
        expect((await categories.lockById(category.id))?.toSnapshot()).toEqual(category.toSnapshot());
        expect(await categories.lockById(category.id + 1000)).toBeNull();
      });
    });

    it('hands out new ids in ascending order; add refuses an id stored already, save an id not stored', async () => {
      const [first, second] = [await categories.nextId(), await categories.nextId()];
      expect(first).toBeGreaterThan(0);
      expect(second).toBeGreaterThan(first);
      const stored = await addNew({ name: 'Mice' });
      await expect(categories.add(Category.create({ id: stored.id, name: 'Rats' }))).rejects.toMatchObject({
        kind: 'constraint_violation',
        constraintKind: 'unique',
      });
      await categories.save(Category.create({ id: second, name: 'Never added' }));
      expect(await categories.findById(second)).toBeNull();
      expect((await categories.list({ limit: 10 })).items.map((c) => c.name)).toEqual(['Mice']);
    });

    it('updates in place: same id, new name and description', async () => {
      const category = await aCategory().named('Birds').saveIn(subject);
      category.rename('Parrots');
      category.describe(null);
      await categories.save(category);
      const saved = await categories.findById(category.id);
      expect(saved?.toSnapshot()).toEqual({ id: category.id, name: 'Parrots', description: null, version: 2 });
      expect((await categories.findById(category.id))?.name).toBe('Parrots');
      expect((await categories.list({ limit: 10 })).items).toHaveLength(1);
    });

    it('keeps the version: one more for an update of the name or description, the same for none', async () => {
      const category = await aCategory().named('Hamsters').saveIn(subject);
      expect((await categories.findById(category.id))?.version).toBe(1);
      await categories.save(category); // the same values
      expect((await categories.findById(category.id))?.version).toBe(1);
      category.describe('Small');
      await categories.save(category);
      category.rename('Gerbils');
      await categories.save(category);
      expect((await categories.findById(category.id))?.version).toBe(3);
      expect((await categories.list({ limit: 10 })).items.map((c) => c.version)).toEqual([3]);
    });

    it('hands back copies: changing a found category changes nothing stored until it is saved', async () => {
      const category = await aCategory().named('Fish').saveIn(subject);
      (await categories.findById(category.id))?.rename('Sharks');
      expect((await categories.findById(category.id))?.name).toBe('Fish');
    });

    it('refuses a name taken in any case, on insert and on rename, with CategoryNameTakenError', async () => {
      await aCategory().named('Reptiles').saveIn(subject);
      await expect(addNew({ name: 'REPTILES' })).rejects.toBeInstanceOf(CategoryNameTakenError);
      const other = await aCategory().named('Snakes').saveIn(subject);
      other.rename('reptiles');
      await expect(categories.save(other)).rejects.toMatchObject({ kind: 'category_name_taken' });
      expect((await categories.findById(other.id))?.name).toBe('Snakes');
    });

    it('refuses a name that is the same after NFKC normalisation and case folding (full-width, ß)', async () => {
      await aCategory().named('Dogs').saveIn(subject);
      await expect(addNew({ name: '\uFF24\uFF2F\uFF27\uFF33' })).rejects.toBeInstanceOf(CategoryNameTakenError);
      await aCategory().named('Straße').saveIn(subject);
      await expect(addNew({ name: 'STRASSE' })).rejects.toBeInstanceOf(CategoryNameTakenError);
      const other = await aCategory().named('Cats').saveIn(subject);
      other.rename('\uFF44ogs');
      await expect(categories.save(other)).rejects.toMatchObject({ kind: 'category_name_taken' });
    });

    it('lets a category change the case of its own name', async () => {
      const category = await aCategory().named('horses').saveIn(subject);
      category.rename('Horses');
      await categories.save(category);
      expect((await categories.findById(category.id))?.name).toBe('Horses');
    });

    it('lists by ascending id, a keyset page at a time', async () => {
      const saved: Category[] = [];
      for (const name of ['A', 'B', 'C', 'D', 'E']) saved.push(await aCategory().named(name).saveIn(subject));
      const ids = saved.map((c) => c.id);
      const first = await categories.list({ limit: 2 });
      expect(first.items.map((c) => c.id)).toEqual(ids.slice(0, 2));
      expect(first.nextAfterId).toBe(ids[1]);
      const last = await categories.list({ limit: 3, afterId: ids[1] });
      expect(last.items.map((c) => c.id)).toEqual(ids.slice(2));
      expect(last.nextAfterId).toBeNull();
      expect(await categories.list({ limit: 2, afterId: ids[4] })).toEqual({ items: [], nextAfterId: null });
    });

    it('deletes: true once, false after; refuses with CategoryInUseError while a pet belongs to it', async () => {
      const empty = await aCategory().saveIn(subject);
      expect(await categories.delete(empty.id)).toBe(true);
      expect(await categories.findById(empty.id)).toBeNull();
      expect(await categories.delete(empty.id)).toBe(false);
      const used = await aCategory().saveIn(subject);
      const { pet } = await aPet().inCategory(used.id).saveIn(subject);
      await expect(categories.delete(used.id)).rejects.toBeInstanceOf(CategoryInUseError);
      expect(await categories.findById(used.id)).not.toBeNull();
      await subject.pets.delete(pet.id);
      expect(await categories.delete(used.id)).toBe(true);
    });

    it('takes part in the unit of work: a failed run leaves nothing; its ids are not reused', async () => {
      const failure = new Error('the command failed');
      let rolledBackId = 0;
      await expect(
        subject.uow.run(async () => {
          rolledBackId = (await addNew({ name: 'Ephemeral' })).id;
          expect(await categories.findById(rolledBackId)).not.toBeNull();
          throw failure;
        }),
      ).rejects.toBe(failure);
      expect(await categories.findById(rolledBackId)).toBeNull();
      // The name is free again; the sequence went on (PostgreSQL never reuses a sequence value).
      const again = await addNew({ name: 'Ephemeral' });
      expect(again.id).toBeGreaterThan(rolledBackId);
    });

    it("a nested run joins the outer one: the outer failure undoes the inner run's writes too", async () => {
      let innerId = 0;
      await expect(
        subject.uow.run(async () => {
          innerId = (await subject.uow.run(() => addNew({ name: 'Inner' }))).id;
          throw new Error('the outer command failed');
        }),
      ).rejects.toThrow('the outer command failed');
      expect(await categories.findById(innerId)).toBeNull();
    });

    it('a committed run keeps its writes', async () => {
      const saved = await subject.uow.run(() => addNew({ name: 'Kept' }));
      expect((await categories.findById(saved.id))?.name).toBe('Kept');
    });
  });
}
