import { Injectable } from '@nestjs/common';
import { Page, PageRequest, PetFilter, PetRepository, pageFromRows } from '@petstore/application';
import { Pet, PetStatus, UnknownCategoryError } from '@petstore/domain';
import { violated } from '../../database/driver-errors';
import { listStatement } from '../../database/list-statement';
import { SequenceBlocks } from '../../database/next-id';
import { TransactionHost } from '../../database/transaction-host';

/** The foreign key from pets to categories (migration PetsAndInventory). */
const PETS_CATEGORY_FK = 'pets_category_fk';

/*
 * Fixed SQL run straight on pg by the transaction host (no query building, no entity hydration):
 * rows map straight to domain objects. The table is the one its migrations create. `version` is read, never
 * written: the database keeps it (migration ResourceVersions).
 */
const COLUMNS = `id, name, category_id, status, created_at, version`;
const FIND_BY_ID = `SELECT ${COLUMNS} FROM pets WHERE id = $1`;
const LOCK_BY_ID = `SELECT ${COLUMNS} FROM pets WHERE id = $1 FOR UPDATE`;
const INSERT = `INSERT INTO pets (id, name, category_id, status, created_at) VALUES ($1, $2, $3, $4, $5)`;
const UPDATE = `UPDATE pets SET name = $2, category_id = $3, status = $4 WHERE id = $1`;
const DELETE = `DELETE FROM pets WHERE id = $1`;
/**
 * `list` (listStatement): the conditions of the filter given, then the keyset order and limit. Each filter has its
 * index (see the PetsAndInventory migration); the page is `id > after ORDER BY id`.
 */
const LIST_SELECT = `SELECT ${COLUMNS} FROM pets`;
const LIST_AFTER = (p: string) => `id > ${p}`;
const LIST_IDS = (p: string) => `id = ANY(${p})`;
const LIST_STATUSES = (p: string) => `status = ANY(${p})`;
const LIST_CATEGORY = (p: string) => `category_id = ${p}`;
// lower(name) LIKE '%…%' is what the trigram index on lower(name) serves.
const LIST_NAME_CONTAINS = (p: string) => `lower(name) LIKE lower(${p})`;
const LIST_ORDER = (limit: string) => `ORDER BY id LIMIT ${limit}`;

/** A row of `pets` as pg returns it (bigint as text). */
interface PetRow {
  id: string;
  name: string;
  category_id: string;
  status: PetStatus;
  created_at: Date;
  version: string;
}

const toPet = (row: PetRow): Pet =>
  Pet.restore({
    id: Number(row.id),
    name: row.name,
    categoryId: Number(row.category_id),
    status: row.status,
    createdAt: row.created_at,
    version: Number(row.version),
  });

@Injectable()
export class PgPetRepository extends PetRepository {
  private readonly ids = new SequenceBlocks('pets');

  constructor(private readonly host: TransactionHost) {
    super();
  }

  async findById(id: number): Promise<Pet | null> {
    const [row] = await this.host.query<PetRow>(FIND_BY_ID, [id]);
    return row ? toPet(row) : null;
  }

  async lockById(id: number): Promise<Pet | null> {
    this.host.requireTransaction('lockById');
    const [row] = await this.host.query<PetRow>(LOCK_BY_ID, [id]);
    return row ? toPet(row) : null;
  }

  async list(filter: PetFilter, { limit, afterId }: PageRequest): Promise<Page<Pet>> {
    const { text, params } = listStatement({
      select: LIST_SELECT,
      conditions: [
        [afterId, LIST_AFTER],
        [filter.ids, LIST_IDS],
        [filter.statuses, LIST_STATUSES],
        [filter.categoryId, LIST_CATEGORY],
        [filter.nameContains === undefined ? undefined : `%${escapeLike(filter.nameContains)}%`, LIST_NAME_CONTAINS],
      ],
      order: LIST_ORDER,
      limit: limit + 1,
    });
    const rows = await this.host.query<PetRow>(text, params);
    return pageFromRows(rows.map(toPet), limit, (pet) => pet.id);
  }

  nextId(): Promise<number> {
    return this.ids.take(this.host);
  }

  async add(pet: Pet): Promise<void> {
    const { id, name, categoryId, status, createdAt } = pet.toSnapshot();
    await this.categoryChecked(pet, () => this.host.query(INSERT, [id, name, categoryId, status, createdAt]));
    this.host.changed('pets');
  }

  async save(pet: Pet): Promise<void> {
    const { id, name, categoryId, status } = pet.toSnapshot();
    await this.categoryChecked(pet, () => this.host.query(UPDATE, [id, name, categoryId, status]));
    this.host.changed('pets');
  }

  private async categoryChecked(pet: Pet, write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } catch (error) {
      // The category is checked by its foreign key: race-free, and the database has the last word.
      if (violated(error, 'foreign_key', PETS_CATEGORY_FK)) {
        throw new UnknownCategoryError(pet.categoryId);
      }
      throw error;
    }
  }

  async delete(id: number): Promise<boolean> {
    // The stock entry goes with the pet (stock.pet_id … ON DELETE CASCADE).
    const { affected } = await this.host.execute(DELETE, [id]);
    if (affected > 0) {
      this.host.changed('pets');
      this.host.changed('stock');
    }
    return affected > 0;
  }
}

/** `%`, `_` and the escape character itself match literally (LIKE's default escape is `\`). */
function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, '\\$&');
}
