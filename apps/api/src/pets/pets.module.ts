import { Module } from '@nestjs/common';
import { CreatePet, DeletePet, PetQueries, UpdatePet } from '@petstore/application';
import { PetsController } from './pets.controller';

/** The catalogue; its repositories come from CatalogueRepositoriesModule. */
@Module({
  controllers: [PetsController],
  providers: [CreatePet, UpdatePet, DeletePet, PetQueries],
})
export class PetsModule {}
