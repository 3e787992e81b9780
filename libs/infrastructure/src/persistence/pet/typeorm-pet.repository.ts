import { Injectable } from '@nestjs/common';
import { Page, PageRequest, PetFilter, PetRepository, pageFromRows } from '@petstore/application';
import { Pet, UnknownCategoryError } from '@petstore/domain';
import { violated } from '../../database/driver-errors';
import { nextSequenceId } from '../../database/next-id';
import { TransactionHost } from '../../database/transaction-host';
import { PetMapper } from './pet.mapper';
import { PetOrmEntity } from './pet.orm-entity';

/** The foreign key from pets to categories (migration PetsAndInventory). */
const PETS_CATEGORY_FK = 'pets_category_fk';

@Injectable()
export class TypeOrmPetRepository extends PetRepository {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  private get rows() {
    return this.host.manager.getRepository(PetOrmEntity);
  }

  async findById(id: number): Promise<Pet | null> {
    const row = await this.rows.findOneBy({ id });
    return row ? PetMapper.toDomain(row) : null;
  }

  async lockById(id: number): Promise<Pet | null> {
    const row = await this.rows.findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
    return row ? PetMapper.toDomain(row) : null;
  }

  /** Each filter has its index (see the PetsAndInventory migration); the page is `id > after ORDER BY id`. */
  async list(filter: PetFilter, { limit, afterId }: PageRequest): Promise<Page<Pet>> {
    const query = this.rows
      .createQueryBuilder('pet')
      .orderBy('pet.id', 'ASC')
      .limit(limit + 1);
    if (afterId !== undefined) query.andWhere('pet.id > :afterId', { afterId });
    if (filter.ids !== undefined) query.andWhere('pet.id = ANY(:ids)', { ids: filter.ids });
    if (filter.statuses !== undefined) query.andWhere('pet.status = ANY(:statuses)', { statuses: filter.statuses });
    if (filter.categoryId !== undefined)
      query.andWhere('pet.categoryId = :categoryId', { categoryId: filter.categoryId });
    if (filter.nameContains !== undefined) {
      // lower(name) LIKE '%…%' is what the trigram index on lower(name) serves.
      query.andWhere('lower(pet.name) LIKE lower(:pattern)', { pattern: `%${escapeLike(filter.nameContains)}%` });
    }
    const rows = await query.getMany();
    return pageFromRows(rows.map(PetMapper.toDomain), limit, (pet) => pet.id);
  }

  nextId(): Promise<number> {
    return nextSequenceId(this.host.manager, 'pets');
  }

  async add(pet: Pet): Promise<void> {
    await this.categoryChecked(pet, () => this.rows.insert(PetMapper.toPersistence(pet)));
  }

  async save(pet: Pet): Promise<void> {
    const { id, ...changes } = PetMapper.toPersistence(pet);
    await this.categoryChecked(pet, () => this.rows.update({ id }, changes));
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
    const result = await this.rows.delete({ id });
    return (result.affected ?? 0) > 0;
  }
}

/** `%`, `_` and the escape character itself match literally (LIKE's default escape is `\`). */
function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, '\\$&');
}
