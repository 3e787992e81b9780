import { Pet } from '@petstore/domain';
import { PetOrmEntity } from './pet.orm-entity';

export const PetMapper = {
  toDomain(row: PetOrmEntity): Pet {
    return Pet.restore({ id: row.id, name: row.name, categoryId: row.categoryId, status: row.status });
  },
  toPersistence(pet: Pet): PetOrmEntity {
    const row = new PetOrmEntity();
    const { id, name, categoryId, status } = pet.toSnapshot();
    row.id = id;
    row.name = name;
    row.categoryId = categoryId;
    row.status = status;
    return row;
  },
};
