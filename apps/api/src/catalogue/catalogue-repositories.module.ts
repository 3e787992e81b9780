import { Module } from '@nestjs/common';
import {
  OpenOrders,
  PetRepository,
  StockCommand,
  StockLevels,
  StockRepository,
  StockReservations,
} from '@petstore/application';
import { PgOpenOrders, PgPetRepository, PgStockLevels, PgStockRepository } from '@petstore/infrastructure';
import { EventsModule } from '../events/events.module';

/**
 * The catalogue's repositories (pets, their stock), bound to their adapters once, with the one StockCommand over them
 * (which records the stock's events through EventRecorder, the events' port) and StockReservations, what ordering
 * uses of the catalogue: ordering imports this module, the catalogue nothing of ordering. The catalogue's question
 * about a pet's open orders (OpenOrders, its own port) is answered by an adapter on the orders table (PgOpenOrders).
 */
@Module({
  imports: [EventsModule],
  providers: [
    { provide: PetRepository, useClass: PgPetRepository },
    { provide: StockRepository, useClass: PgStockRepository },
    { provide: StockLevels, useClass: PgStockLevels },
    { provide: OpenOrders, useClass: PgOpenOrders },
    StockCommand,
    StockReservations,
  ],
  exports: [PetRepository, StockRepository, StockLevels, OpenOrders, StockCommand, StockReservations],
})
export class CatalogueRepositoriesModule {}
