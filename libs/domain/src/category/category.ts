import { newId } from '../common/identity';
import { LIMITS } from '../common/limits';
import { boundedText, displayName } from '../common/text';

export interface CategoryProps {
  id: number;
  name: string;
  description: string | null;
}

/** A kind of animal the catalogue groups pets by. Names are unique by nameKey (NFKC and case folded). */
export class Category {
  private constructor(private props: CategoryProps) {}

  /** A new category, with the id `CategoryRepository.nextId()` gave. */
  static create(input: { id: number; name: string; description?: string | null }): Category {
    return new Category({ id: newId(input.id), ...Category.validate(input) });
  }

  /** A new category's fields, checked (InvalidValueError): a use case checks them before it takes an id. */
  static validate(input: { name: string; description?: string | null }): Omit<CategoryProps, 'id'> {
    return {
      name: Category.checkName(input.name),
      description: Category.checkDescription(input.description ?? null),
    };
  }

  static restore(props: CategoryProps): Category {
    return new Category({ ...props });
  }

  get id(): number {
    return this.props.id;
  }
  get name(): string {
    return this.props.name;
  }
  get description(): string | null {
    return this.props.description;
  }

  rename(name: string): void {
    this.props.name = Category.checkName(name);
  }

  describe(description: string | null): void {
    this.props.description = Category.checkDescription(description);
  }

  toSnapshot(): CategoryProps {
    return { ...this.props };
  }

  private static checkName(name: string): string {
    return displayName('name', name, LIMITS.categoryName.min, LIMITS.categoryName.max);
  }

  private static checkDescription(description: string | null): string | null {
    if (description === null) return null;
    return boundedText('description', description, 0, LIMITS.categoryDescription.max);
  }
}
