import { Injectable } from '@nestjs/common';
import { Page, PageRequest, PetFilter, PetRepository, pageFromRows } from '@petstore/application';
import { Pet, PetStatus, UnknownCategoryError } from '@petstore/domain';
import { violated } from '../../database/driver-errors';
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
 * `list`: this head, then the conditions of the filter given (each a fixed fragment with its numbered
 * parameter, joined by AND), then the keyset order and limit. Each filter has its index (see the
 * PetsAndInventory migration); the page is `id > after ORDER BY id`.
 */
const LIST_HEAD = `SELECT ${COLUMNS} FROM pets`;
const LIST_AFTER = (n: number) => `id > $${n}`;
const LIST_IDS = (n: number) => `id = ANY($${n})`;
const LIST_STATUSES = (n: number) => `status = ANY($${n})`;
const LIST_CATEGORY = (n: number) => `category_id = $${n}`;
// lower(name) LIKE '%…%' is what the trigram index on lower(name) serves.
const LIST_NAME_CONTAINS = (n: number) => `lower(name) LIKE lower($${n})`;
const LIST_TAIL = (n: number) => ` ORDER BY id LIMIT $${n}`;

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
    const params: unknown[] = [];
    const where: string[] = [];
    if (afterId !== undefined) where.push(LIST_AFTER(params.push(afterId)));
    if (filter.ids !== undefined) where.push(LIST_IDS(params.push(filter.ids)));
    if (filter.statuses !== undefined) where.push(LIST_STATUSES(params.push(filter.statuses)));
    if (filter.categoryId !== undefined) where.push(LIST_CATEGORY(params.push(filter.categoryId)));
    if (filter.nameContains !== undefined) {
      where.push(LIST_NAME_CONTAINS(params.push(`%${escapeLike(filter.nameContains)}%`)));
    }
    const sql =
      LIST_HEAD + (where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '') + LIST_TAIL(params.push(limit + 1));
    const rows = await this.host.query<PetRow>(sql, params);
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
