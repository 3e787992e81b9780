import { Injectable } from '@nestjs/common';
import { CategoryRepository, Page, PageRequest, pageFromRows } from '@petstore/application';
import { Category, CategoryInUseError, CategoryNameTakenError, nameKey } from '@petstore/domain';
import { violated } from '../../database/driver-errors';
import { listStatement } from '../../database/list-statement';
import { SequenceBlocks } from '../../database/next-id';
import { TransactionHost } from '../../database/transaction-host';

const CATEGORIES_NAME_UNIQUE = 'categories_name_key_uq';

/*
 * Fixed SQL run straight on pg by the transaction host (no query building, no entity hydration):
 * rows map straight to domain objects. The table is the one its migrations create.
 */
/** `version` is read, never written: the database keeps it (migration ResourceVersions). */
const COLUMNS = `id, name, description, version`;
const FIND_BY_ID = `SELECT ${COLUMNS} FROM categories WHERE id = $1`;
const LOCK_BY_ID = `SELECT ${COLUMNS} FROM categories WHERE id = $1 FOR UPDATE`;
/** `list` (listStatement): the page is `id > after ORDER BY id`. */
const LIST_SELECT = `SELECT ${COLUMNS} FROM categories`;
const LIST_AFTER = (p: string) => `id > ${p}`;
const LIST_ORDER = (limit: string) => `ORDER BY id LIMIT ${limit}`;
const INSERT = `INSERT INTO categories (id, name, description, name_key) VALUES ($1, $2, $3, $4)`;
const UPDATE = `UPDATE categories SET name = $2, description = $3, name_key = $4 WHERE id = $1`;
const DELETE = `DELETE FROM categories WHERE id = $1`;

/** A row of `categories` as pg returns it (bigint as text). */
interface CategoryRow {
  id: string;
  name: string;
  description: string | null;
  version: string;
}

const toCategory = (row: CategoryRow): Category =>
  Category.restore({ id: Number(row.id), name: row.name, description: row.description, version: Number(row.version) });

@Injectable()
export class PgCategoryRepository extends CategoryRepository {
  private readonly ids = new SequenceBlocks('categories');

  constructor(private readonly host: TransactionHost) {
    super();
  }

  async findById(id: number): Promise<Category | null> {
    const [row] = await this.host.query<CategoryRow>(FIND_BY_ID, [id]);
    return row ? toCategory(row) : null;
  }

  async lockById(id: number): Promise<Category | null> {
    this.host.requireTransaction('lockById');
    const [row] = await this.host.query<CategoryRow>(LOCK_BY_ID, [id]);
    return row ? toCategory(row) : null;
  }

  async list({ limit, afterId }: PageRequest): Promise<Page<Category>> {
    const { text, params } = listStatement({
      select: LIST_SELECT,
      conditions: [[afterId || undefined, LIST_AFTER]],
      order: LIST_ORDER,
      limit: limit + 1,
    });
    const rows = await this.host.query<CategoryRow>(text, params);
    return pageFromRows(rows.map(toCategory), limit, (c) => c.id);
  }

  nextId(): Promise<number> {
    return this.ids.take(this.host);
  }

  async add(category: Category): Promise<void> {
    const { id, name, description } = category.toSnapshot();
    await this.nameChecked(category, () => this.host.query(INSERT, [id, name, description, nameKey(name)]));
    this.host.changed('categories');
  }

  async save(category: Category): Promise<void> {
    const { id, name, description } = category.toSnapshot();
    await this.nameChecked(category, () => this.host.query(UPDATE, [id, name, description, nameKey(name)]));
    this.host.changed('categories');
  }

  /** The unique index on name_key (the domain's nameKey) decides, race-free; a stored id stays a plain violation. */
  private async nameChecked(category: Category, write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } catch (error) {
      if (violated(error, 'unique', CATEGORIES_NAME_UNIQUE)) throw new CategoryNameTakenError(category.name);
      throw error;
    }
  }

  async delete(id: number): Promise<boolean> {
    try {
      const { affected } = await this.host.execute(DELETE, [id]);
      if (affected > 0) this.host.changed('categories');
      return affected > 0;
    } catch (error) {
      // Pets reference their category with ON DELETE RESTRICT: the database has the last word.
      if (violated(error, 'foreign_key')) throw new CategoryInUseError(id);
      throw error;
    }
  }
}
