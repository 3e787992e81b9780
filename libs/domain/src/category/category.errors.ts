import { DomainError, NotFoundError } from '../common/domain-error';

export class CategoryNotFoundError extends NotFoundError {
  constructor(id: number) {
    super('Category', id);
  }
}

export class CategoryNameTakenError extends DomainError {
  readonly kind = 'category_name_taken' as const;
  constructor(name: string) {
    super(`A category named "${name}" already exists.`);
  }
}

export class CategoryInUseError extends DomainError {
  readonly kind = 'category_in_use' as const;
  constructor(id: number) {
    super(`Category ${id} still has pets; move or delete them first.`);
  }
}

/** A command names a category that does not exist (422, unlike a missing path id). */
export class UnknownCategoryError extends DomainError {
  readonly kind = 'unknown_category' as const;
  constructor(id: number) {
    super(`Category ${id} does not exist.`);
  }
}
