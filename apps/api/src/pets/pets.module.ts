import { Module } from '@nestjs/common';
import { CreatePet, DeletePet, InventoryRepository, PetQueries, PetRepository, UpdatePet } from '@petstore/application';
import { TypeOrmInventoryRepository, TypeOrmPetRepository } from '@petstore/infrastructure';
import { PetsController } from './pets.controller';

@Module({
  controllers: [PetsController],
  providers: [
    { provide: PetRepository, useClass: TypeOrmPetRepository },
    { provide: InventoryRepository, useClass: TypeOrmInventoryRepository },
    CreatePet,
    UpdatePet,
    DeletePet,
    PetQueries,
  ],
  exports: [PetRepository, InventoryRepository],
})
export class PetsModule {}
