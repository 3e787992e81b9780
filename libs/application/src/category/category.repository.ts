import { Category } from '@petstore/domain';
import { Page, PageRequest } from '../common/page';

export abstract class CategoryRepository {
  abstract findById(id: number): Promise<Category | null>;
  /** Finds and locks the category's row until the transaction ends (inside UnitOfWork.run only). */
  abstract lockById(id: number): Promise<Category | null>;
  abstract list(page: PageRequest): Promise<Page<Category>>;
  /** A new category's id, taken from the table's sequence before the category is created (never reused). */
  abstract nextId(): Promise<number>;
  /** Stores a new category; throws CategoryNameTakenError when the name is taken (any case). */
  abstract add(category: Category): Promise<void>;
  /** Writes a stored category's changes; throws CategoryNameTakenError when the name is taken (any case). */
  abstract save(category: Category): Promise<void>;
  /** Throws CategoryInUseError when pets still belong to it. Returns false if it did not exist. */
  abstract delete(id: number): Promise<boolean>;
}
