import { InventoryItem } from '@petstore/domain';
import { InventoryOrmEntity } from './inventory.orm-entity';

export const InventoryMapper = {
  toDomain(row: InventoryOrmEntity): InventoryItem {
    return InventoryItem.restore({ petId: row.petId, quantity: row.quantity });
  },
  toPersistence(item: InventoryItem): InventoryOrmEntity {
    const row = new InventoryOrmEntity();
    const { petId, quantity } = item.toSnapshot();
    row.petId = petId;
    row.quantity = quantity;
    return row;
  },
};
