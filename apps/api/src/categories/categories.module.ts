import { Module } from '@nestjs/common';
import {
  CategoryQueries,
  CategoryRepository,
  CreateCategory,
  DeleteCategory,
  UpdateCategory,
} from '@petstore/application';
import { TypeOrmCategoryRepository } from '@petstore/infrastructure';
import { CategoriesController } from './categories.controller';

@Module({
  controllers: [CategoriesController],
  providers: [
    { provide: CategoryRepository, useClass: TypeOrmCategoryRepository },
    CreateCategory,
    UpdateCategory,
    DeleteCategory,
    CategoryQueries,
  ],
  exports: [CategoryRepository],
})
export class CategoriesModule {}
