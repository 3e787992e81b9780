import { Global, Module } from '@nestjs/common';
import { InventoryRepository, OrderRepository, PetRepository, StockLevels } from '@petstore/application';
import { TypeOrmInventoryRepository, TypeOrmOrderRepository, TypeOrmPetRepository, TypeOrmStockLevels } from '@petstore/infrastructure';

/**
 * The repositories the pets and store slices share (pets, their stock, orders), bound
 * to their TypeORM adapters once: deleting a pet counts its open orders, ordering locks
 * the pet and its stock.
 */
@Global()
@Module({
  providers: [
    { provide: PetRepository, useClass: TypeOrmPetRepository },
    { provide: InventoryRepository, useClass: TypeOrmInventoryRepository },
    { provide: OrderRepository, useClass: TypeOrmOrderRepository },
    { provide: StockLevels, useClass: TypeOrmStockLevels },
  ],
  exports: [PetRepository, InventoryRepository, OrderRepository, StockLevels],
})
export class CatalogueRepositoriesModule {}
