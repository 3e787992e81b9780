import { Stock } from '@petstore/domain';
import { StockOrmEntity } from './stock.orm-entity';

export const StockMapper = {
  toDomain(row: StockOrmEntity): Stock {
    return Stock.restore({ petId: row.petId, quantity: row.quantity });
  },
  toPersistence(item: Stock): StockOrmEntity {
    const row = new StockOrmEntity();
    const { petId, quantity } = item.toSnapshot();
    row.petId = petId;
    row.quantity = quantity;
    return row;
  },
};
