import { Global, Module } from '@nestjs/common';
import {
  StockRepository,
  OrderHoldSettings,
  OrderRepository,
  PetRepository,
  StockCommand,
  StockLevels,
} from '@petstore/application';
import {
  TypeOrmStockRepository,
  TypeOrmOrderRepository,
  TypeOrmPetRepository,
  TypeOrmStockLevels,
} from '@petstore/infrastructure';
import { AppConfig } from '../config/app-config';

/**
 * The repositories the pets and store slices share (pets, their stock, orders), bound
 * to their TypeORM adapters once: deleting a pet counts its open orders, ordering locks
 * the pet and its stock. With them the one StockCommand over them and the order-hold settings,
 * which the scheduled order expiry also needs (in a worker-only process too).
 */
@Global()
@Module({
  providers: [
    { provide: PetRepository, useClass: TypeOrmPetRepository },
    { provide: StockRepository, useClass: TypeOrmStockRepository },
    { provide: OrderRepository, useClass: TypeOrmOrderRepository },
    { provide: StockLevels, useClass: TypeOrmStockLevels },
    StockCommand,
    {
      provide: OrderHoldSettings,
      useFactory: ({ ordering }: AppConfig) =>
        new OrderHoldSettings(ordering.maxOpenUnitsPerCustomer, ordering.orderHoldMinutes),
      inject: [AppConfig],
    },
  ],
  exports: [PetRepository, StockRepository, OrderRepository, StockLevels, StockCommand, OrderHoldSettings],
})
export class CatalogueRepositoriesModule {}
