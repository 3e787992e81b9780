import { Injectable } from '@nestjs/common';
import { CategoryRepository, Page, PageRequest, pageFromRows } from '@petstore/application';
import { Category, CategoryInUseError, CategoryNameTakenError } from '@petstore/domain';
import { MoreThan } from 'typeorm';
import { violated } from '../../database/driver-errors';
import { nextSequenceId } from '../../database/next-id';
import { TransactionHost } from '../../database/transaction-host';
import { CategoryMapper } from './category.mapper';
import { CategoryOrmEntity } from './category.orm-entity';

const CATEGORIES_NAME_UNIQUE = 'categories_name_lower_uq';

@Injectable()
export class TypeOrmCategoryRepository extends CategoryRepository {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  private get rows() {
    return this.host.manager.getRepository(CategoryOrmEntity);
  }

  async findById(id: number): Promise<Category | null> {
    const row = await this.rows.findOneBy({ id });
    return row ? CategoryMapper.toDomain(row) : null;
  }

  async list({ limit, afterId }: PageRequest): Promise<Page<Category>> {
    const rows = await this.rows.find({
      where: afterId ? { id: MoreThan(afterId) } : {},
      order: { id: 'ASC' },
      take: limit + 1,
    });
    return pageFromRows(rows.map(CategoryMapper.toDomain), limit, (c) => c.id);
  }

  nextId(): Promise<number> {
    return nextSequenceId(this.host.manager, 'categories');
  }

  async add(category: Category): Promise<void> {
    await this.nameChecked(category, () => this.rows.insert(CategoryMapper.toPersistence(category)));
  }

  async save(category: Category): Promise<void> {
    const { id, ...changes } = CategoryMapper.toPersistence(category);
    await this.nameChecked(category, () => this.rows.update({ id }, changes));
  }

  /** The unique index on lower(name) decides, race-free; an id stored already stays a plain unique violation. */
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
      const result = await this.rows.delete({ id });
      return (result.affected ?? 0) > 0;
    } catch (error) {
      // Pets reference their category with ON DELETE RESTRICT: the database has the last word.
      if (violated(error, 'foreign_key')) throw new CategoryInUseError(id);
      throw error;
    }
  }
}
