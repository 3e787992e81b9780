import {
  Category,
  CategoryInUseError,
  CategoryNameTakenError,
  FIRST_VERSION,
  nameKey,
  Stock,
  Pet,
  UnknownCategoryError,
} from '@petstore/domain';
import { CategoryRepository } from '../../src/category/category.repository';
import { StockRepository } from '../../src/stock/stock.repository';
import { PetFilter, PetRepository } from '../../src/stock/pet.repository';
import { ConstraintViolationError } from '../../src/ports';
import { Page, PageRequest, pageFromRows } from '../../src/common/page';
import { StockLevel, StockLevelFilter, StockLevels } from '../../src/stock/stock-levels';
import { InMemoryDatabase, versionAfter } from './in-memory-database';

/** Keyset page over rows held by id: `id > afterId`, ascending, `limit + 1` looked at (as the SQL does). */
export function pageOf<T>(rows: Iterable<T>, idOf: (row: T) => number, { limit, afterId }: PageRequest): Page<T> {
  const sorted = [...rows].filter((row) => !afterId || idOf(row) > afterId).sort((a, b) => idOf(a) - idOf(b));
  return pageFromRows(sorted.slice(0, limit + 1), limit, idOf);
}

/** What PostgreSQL says when `add` is given an id that is stored already (`<table>_pkey`). */
export function primaryKeyTaken(table: string, id: number): ConstraintViolationError {
  return new ConstraintViolationError('unique', `${table}_pkey`, `duplicate key: ${table} ${id} exists.`);
}

/** Categories; names unique by nameKey (the `name_key` unique index), in use while pets point at them. */
export class InMemoryCategoryRepository extends CategoryRepository {
  constructor(private readonly db: InMemoryDatabase) {
    super();
  }

  async findById(id: number): Promise<Category | null> {
    const row = this.db.tables.categories.get(id);
    return row ? Category.restore(row) : null;
  }

  async lockById(id: number): Promise<Category | null> {
    this.db.assertInTransaction('lockById');
    return this.findById(id);
  }

  async exists(id: number): Promise<boolean> {
    return this.db.tables.categories.has(id);
  }

  async list(page: PageRequest): Promise<Page<Category>> {
    return pageOf([...this.db.tables.categories.values()].map(Category.restore), (c) => c.id, page);
  }

  async nextId(): Promise<number> {
    return this.db.nextId('categories');
  }

  async add(category: Category): Promise<void> {
    this.write(category, 'insert');
  }

  async save(category: Category): Promise<void> {
    this.write(category, 'update');
  }

  /** As INSERT (a taken id is a primary-key violation) or UPDATE (an unknown id changes nothing) would. */
  private write(category: Category, as: 'insert' | 'update'): void {
    const row = category.toSnapshot();
    const stored = this.db.tables.categories.get(row.id);
    if (as === 'insert' && stored) throw primaryKeyTaken('categories', row.id);
    if (as === 'update' && !stored) return;
    const key = nameKey(row.name);
    for (const other of this.db.tables.categories.values()) {
      if (other.id !== row.id && nameKey(other.name) === key) throw new CategoryNameTakenError(row.name);
    }
    // The version is the database's: FIRST_VERSION on insert, one more when an update changed what the API shows.
    row.version = stored ? versionAfter(stored, row, ['name', 'description']) : FIRST_VERSION;
    this.db.tables.categories.set(row.id, row);
  }

  async delete(id: number): Promise<boolean> {
    if (!this.db.tables.categories.has(id)) return false;
    if ([...this.db.tables.pets.values()].some((pet) => pet.categoryId === id)) throw new CategoryInUseError(id);
    return this.db.tables.categories.delete(id);
  }
}

export class InMemoryPetRepository extends PetRepository {
  constructor(private readonly db: InMemoryDatabase) {
    super();
  }

  async findById(id: number): Promise<Pet | null> {
    const row = this.db.tables.pets.get(id);
    return row ? Pet.restore(row) : null;
  }

  async lockById(id: number): Promise<Pet | null> {
    this.db.assertInTransaction('lockById');
    return this.findById(id);
  }

  async findByIds(ids: readonly number[]): Promise<Pet[]> {
    return [...new Set(ids)]
      .flatMap((id) => this.db.tables.pets.get(id) ?? [])
      .sort((a, b) => a.id - b.id)
      .map(Pet.restore);
  }

  async list(filter: PetFilter, page: PageRequest): Promise<Page<Pet>> {
    const needle = filter.nameContains?.toLowerCase();
    const rows = [...this.db.tables.pets.values()].filter(
      (pet) =>
        (filter.ids === undefined || filter.ids.includes(pet.id)) &&
        (filter.statuses === undefined || filter.statuses.includes(pet.status)) &&
        (filter.categoryId === undefined || pet.categoryId === filter.categoryId) &&
        (needle === undefined || pet.name.toLowerCase().includes(needle)),
    );
    return pageOf(rows.map(Pet.restore), (pet) => pet.id, page);
  }

  async nextId(): Promise<number> {
    return this.db.nextId('pets');
  }

  async add(pet: Pet): Promise<void> {
    const row = { ...pet.toSnapshot(), version: FIRST_VERSION };
    if (this.db.tables.pets.has(row.id)) throw primaryKeyTaken('pets', row.id);
    if (!this.db.tables.categories.has(row.categoryId)) throw new UnknownCategoryError(row.categoryId);
    this.db.tables.pets.set(row.id, row);
  }

  /**
   * The versions are the database's: the pet's one more when what the API shows of it changed; its stock entry's one
   * more when its status changed (the entry's `InventoryItem` shows the pet's status).
   */
  async save(pet: Pet): Promise<void> {
    const row = pet.toSnapshot();
    const stored = this.db.tables.pets.get(row.id);
    if (!stored) return;
    if (!this.db.tables.categories.has(row.categoryId)) throw new UnknownCategoryError(row.categoryId);
    row.version = versionAfter(stored, row, ['name', 'categoryId', 'status', 'createdAt']);
    const stock = this.db.tables.stock.get(row.id);
    if (stock && stored.status !== row.status) stock.version += 1;
    this.db.tables.pets.set(row.id, row);
  }

  /**
   * The stock entry goes with the pet (ON DELETE CASCADE); its orders that are no longer open stay, without it
   * (SET NULL). An open order would be left without its pet: refused, as `orders_open_has_pet_ck` does.
   */
  async delete(id: number): Promise<boolean> {
    if ([...this.db.tables.orders.values()].some((order) => order.petId === id && order.status === 'placed')) {
      throw new ConstraintViolationError('check', 'orders_open_has_pet_ck', `Pet ${id} still has open orders.`);
    }
    if (!this.db.tables.pets.delete(id)) return false;
    this.db.tables.stock.delete(id);
    for (const order of this.db.tables.orders.values()) {
      if (order.petId !== id) continue;
      // ON DELETE SET NULL updates the order's row: what the API shows of it changed, so does its version.
      order.petId = null;
      order.version += 1;
    }
    return true;
  }
}

export class InMemoryStockRepository extends StockRepository {
  constructor(private readonly db: InMemoryDatabase) {
    super();
  }

  async create(item: Stock): Promise<Stock> {
    const row = { ...item.toSnapshot(), version: FIRST_VERSION };
    if (!this.db.tables.pets.has(row.petId)) {
      throw new ConstraintViolationError('foreign_key', 'stock_pet_fk', `No pet ${row.petId} for the stock entry.`);
    }
    if (this.db.tables.stock.has(row.petId)) {
      throw new ConstraintViolationError('unique', 'stock_pkey', `duplicate key: pet ${row.petId} has an entry.`);
    }
    this.db.tables.stock.set(row.petId, row);
    return item;
  }

  async findByPetId(petId: number): Promise<Stock | null> {
    const row = this.db.tables.stock.get(petId);
    return row ? Stock.restore(row) : null;
  }

  async lockWithPet(petId: number): Promise<{ pet: Pet; stock: Stock } | null> {
    this.db.assertInTransaction('lockWithPet');
    const pet = this.db.tables.pets.get(petId);
    const stock = await this.findByPetId(petId);
    return pet && stock ? { pet: Pet.restore(pet), stock } : null;
  }

  async save(item: Stock): Promise<Stock> {
    const row = item.toSnapshot();
    const stored = this.db.tables.stock.get(row.petId);
    if (!stored) throw new Error(`Pet ${row.petId} has no stock entry to update.`);
    row.version = versionAfter(stored, row, ['quantity']);
    this.db.tables.stock.set(row.petId, row);
    return item;
  }
}

export class InMemoryStockLevels extends StockLevels {
  constructor(private readonly db: InMemoryDatabase) {
    super();
  }

  async find(petId: number): Promise<StockLevel | null> {
    return this.levels().find((level) => level.petId === petId) ?? null;
  }

  async list(filter: StockLevelFilter, page: PageRequest): Promise<Page<StockLevel>> {
    const levels = this.levels().filter((level) => !filter.statuses || filter.statuses.includes(level.status));
    return pageOf(levels, (level) => level.petId, page);
  }

  private levels(): StockLevel[] {
    return [...this.db.tables.stock.values()].flatMap(({ petId, quantity, version }) => {
      const pet = this.db.tables.pets.get(petId);
      return pet ? [{ petId, quantity, status: pet.status, version }] : [];
    });
  }
}
