import { AccountOrmEntity, ApiKeyOrmEntity } from './account/account.orm-entity';
import { CategoryOrmEntity } from './category/category.orm-entity';
import { StockOrmEntity } from './stock/stock.orm-entity';
import { PetOrmEntity } from './pet/pet.orm-entity';
import { OrderOrmEntity } from './order/order.orm-entity';
import { MessageOrmEntity } from './message/message.orm-entity';

/** Every TypeORM entity; each slice appends its own. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export const ENTITIES: Function[] = [
  AccountOrmEntity,
  ApiKeyOrmEntity,
  CategoryOrmEntity,
  PetOrmEntity,
  StockOrmEntity,
  OrderOrmEntity,
  MessageOrmEntity,
];
