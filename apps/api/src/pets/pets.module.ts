import { Module } from '@nestjs/common';
import { CreatePet, DeletePet, InventoryRepository, OrderRepository, PetQueries, PetRepository, UpdatePet } from '@petstore/application';
import { TypeOrmInventoryRepository, TypeOrmOrderRepository, TypeOrmPetRepository } from '@petstore/infrastructure';
import { PetsController } from './pets.controller';

@Module({
  controllers: [PetsController],
  providers: [
    { provide: PetRepository, useClass: TypeOrmPetRepository },
    { provide: InventoryRepository, useClass: TypeOrmInventoryRepository },
    // Status changes by hand and deletion count the pet's open orders (I3, I6).
    { provide: OrderRepository, useClass: TypeOrmOrderRepository },
    CreatePet,
    UpdatePet,
    DeletePet,
    PetQueries,
  ],
  exports: [PetRepository, InventoryRepository],
})
export class PetsModule {}
