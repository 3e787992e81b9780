import { Stock } from '@petstore/domain';
import { InventoryOrmEntity } from './inventory.orm-entity';

export const InventoryMapper = {
  toDomain(row: InventoryOrmEntity): Stock {
    return Stock.restore({ petId: row.petId, quantity: row.quantity });
  },
  toPersistence(item: Stock): InventoryOrmEntity {
    const row = new InventoryOrmEntity();
    const { petId, quantity } = item.toSnapshot();
    row.petId = petId;
    row.quantity = quantity;
    return row;
  },
};
