import { Module } from '@nestjs/common';
import {
  CategoryQueries,
  CategoryRepository,
  CreateCategory,
  CreatePet,
  DeleteCategory,
  DeletePet,
  PetQueries,
  SetStock,
  StockQueries,
  UpdateCategory,
  UpdatePet,
} from '@petstore/application';
import { PgCategoryRepository } from '@petstore/infrastructure';
import { CategoriesController } from './categories.controller';
import { CatalogueRepositoriesModule } from './catalogue-repositories.module';
import { PetsController } from './pets.controller';
import { InventoryController } from './inventory.controller';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { EventsModule } from '../events/events.module';

/** The catalogue's use cases: provided here, used by its controllers and the seed. */
const USE_CASES = [
  CreateCategory,
  UpdateCategory,
  DeleteCategory,
  CategoryQueries,
  CreatePet,
  UpdatePet,
  DeletePet,
  PetQueries,
  SetStock,
  StockQueries,
];

/**
 * The catalogue: categories, pets and their stock. Its controllers are CatalogueHttpModule, which the
 * assembly adds for the `http` role; the seed uses its use cases.
 */
@Module({
  // EventsModule: the use cases record the catalogue's events (EventRecorder).
  imports: [CatalogueRepositoriesModule, EventsModule],
  providers: [{ provide: CategoryRepository, useClass: PgCategoryRepository }, ...USE_CASES],
  exports: USE_CASES,
})
export class CatalogueModule {}

/** `/categories`, `/pets`, `/store/inventory` (the `http` role). */
@Module({
  imports: [CatalogueModule, IdempotencyModule],
  controllers: [CategoriesController, PetsController, InventoryController],
})
export class CatalogueHttpModule {}
