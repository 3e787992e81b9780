import { DomainError, NotFoundError } from '../shared/domain-error';

export class CategoryNotFoundError extends NotFoundError {
  constructor(id: number) {
    super('Category', id);
  }
}

export class CategoryNameTakenError extends DomainError {
  readonly code = 'category_name_taken';
  readonly kind = 'conflict' as const;
  constructor(name: string) {
    super(`A category named "${name}" already exists.`);
  }
}

export class CategoryInUseError extends DomainError {
  readonly code = 'category_in_use';
  readonly kind = 'conflict' as const;
  constructor(id: number) {
    super(`Category ${id} still has pets; move or delete them first.`);
  }
}

/** A command names a category that does not exist (422, unlike a missing path id). */
export class UnknownCategoryError extends DomainError {
  readonly code = 'unknown_category';
  readonly kind = 'unknown_reference' as const;
  constructor(id: number) {
    super(`Category ${id} does not exist.`);
  }
}
