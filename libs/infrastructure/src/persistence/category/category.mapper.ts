import { Category } from '@petstore/domain';
import { CategoryOrmEntity } from './category.orm-entity';

export const CategoryMapper = {
  toDomain(row: CategoryOrmEntity): Category {
    return Category.restore({ id: row.id, name: row.name, description: row.description });
  },
  toPersistence(category: Category): CategoryOrmEntity {
    const row = new CategoryOrmEntity();
    const { id, name, description } = category.toSnapshot();
    row.id = id;
    row.name = name;
    row.description = description;
    return row;
  },
};
