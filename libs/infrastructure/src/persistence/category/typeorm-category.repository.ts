import { Injectable } from '@nestjs/common';
import { CategoryRepository, Page, PageRequest, pageFromRows } from '@petstore/application';
import { Category, CategoryInUseError, CategoryNameTakenError } from '@petstore/domain';
import { MoreThan } from 'typeorm';
import { violated } from '../../database/driver-errors';
import { TransactionHost } from '../../database/transaction-host';
import { CategoryMapper } from './category.mapper';
import { CategoryOrmEntity } from './category.orm-entity';

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

  async save(category: Category): Promise<Category> {
    try {
      return CategoryMapper.toDomain(await this.rows.save(CategoryMapper.toPersistence(category)));
    } catch (error) {
      if (violated(error, 'unique')) throw new CategoryNameTakenError(category.name);
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
