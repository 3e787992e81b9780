import { Module } from '@nestjs/common';
import { CancelOrder, CompleteOrder, OrderQueries, PlaceOrder, SetStock, StockQueries } from '@petstore/application';
import { InventoryController } from './inventory.controller';
import { OrdersController } from './orders.controller';

/** The store: orders and per-pet stock; its repositories come from CatalogueRepositoriesModule. */
@Module({
  controllers: [InventoryController, OrdersController],
  providers: [PlaceOrder, CompleteOrder, CancelOrder, OrderQueries, SetStock, StockQueries],
})
export class StoreModule {}
