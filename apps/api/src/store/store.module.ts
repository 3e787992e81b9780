import { Module } from '@nestjs/common';
import {
  CancelOrder,
  CompleteOrder,
  InventoryRepository,
  OrderQueries,
  OrderRepository,
  PetRepository,
  PlaceOrder,
  SetStock,
  StockLevels,
  StockQueries,
} from '@petstore/application';
import { TypeOrmInventoryRepository, TypeOrmOrderRepository, TypeOrmPetRepository, TypeOrmStockLevels } from '@petstore/infrastructure';
import { InventoryController } from './inventory.controller';
import { OrdersController } from './orders.controller';

/** The store: orders and per-pet stock. */
@Module({
  controllers: [InventoryController, OrdersController],
  providers: [
    { provide: PetRepository, useClass: TypeOrmPetRepository },
    { provide: InventoryRepository, useClass: TypeOrmInventoryRepository },
    { provide: OrderRepository, useClass: TypeOrmOrderRepository },
    { provide: StockLevels, useClass: TypeOrmStockLevels },
    PlaceOrder,
    CompleteOrder,
    CancelOrder,
    OrderQueries,
    SetStock,
    StockQueries,
  ],
})
export class StoreModule {}
