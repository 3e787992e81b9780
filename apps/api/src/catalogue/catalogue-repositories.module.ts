import { Module } from '@nestjs/common';
import {
  StockRepository,
  OrderHoldSettings,
  OrderRepository,
  PetRepository,
  StockCommand,
  StockLevels,
} from '@petstore/application';
import { PgStockRepository, PgOrderRepository, PgPetRepository, PgStockLevels } from '@petstore/infrastructure';
import { ConfigPart } from '../config/app-config';
import { configToken } from '../config/config.module';
import { EventsModule } from '../events/events.module';

/**
 * The repositories the catalogue and ordering slices share (pets, their stock, orders), bound to their
 * adapters once: deleting a pet counts its open orders, ordering locks the pet and its stock. With them the
 * one StockCommand over them (which records the stock's events through EventRecorder, the events' port) and
 * the order-hold settings.
 */
@Module({
  imports: [EventsModule],
  providers: [
    { provide: PetRepository, useClass: PgPetRepository },
    { provide: StockRepository, useClass: PgStockRepository },
    { provide: OrderRepository, useClass: PgOrderRepository },
    { provide: StockLevels, useClass: PgStockLevels },
    StockCommand,
    {
      provide: OrderHoldSettings,
      useFactory: (ordering: ConfigPart<'ordering'>) =>
        new OrderHoldSettings(ordering.maxOpenUnitsPerCustomer, ordering.orderHoldMinutes),
      inject: [configToken('ordering')],
    },
  ],
  exports: [PetRepository, StockRepository, OrderRepository, StockLevels, StockCommand, OrderHoldSettings],
})
export class CatalogueRepositoriesModule {}
