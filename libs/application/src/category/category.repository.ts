import { Category } from '@petstore/domain';
import { Page, PageRequest } from '../shared/page';

export abstract class CategoryRepository {
  abstract findById(id: number): Promise<Category | null>;
  abstract list(page: PageRequest): Promise<Page<Category>>;
  /** Inserts or updates; throws CategoryNameTakenError when the name is taken (any case). */
  abstract save(category: Category): Promise<Category>;
  /** Throws CategoryInUseError when pets still belong to it. Returns false if it did not exist. */
  abstract delete(id: number): Promise<boolean>;
}
