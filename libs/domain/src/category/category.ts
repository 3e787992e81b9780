import { newId } from '../common/identity';
import { LIMITS } from '../common/limits';
import { FIRST_VERSION } from '../common/version';
import { boundedText, displayName } from '../common/text';

export interface CategoryProps {
  id: number;
  name: string;
  description: string | null;
  /** FIRST_VERSION when created; one more for each stored change of its name or description. */
  version: number;
}

/** A kind of animal the catalogue groups pets by. Names are unique by nameKey (NFKC and case folded). */
export class Category {
  private constructor(private props: CategoryProps) {}

  /** A new category, with the id `CategoryRepository.nextId()` gave. */
  static create(input: { id: number; name: string; description?: string | null }): Category {
    return new Category({ id: newId(input.id), ...Category.validate(input), version: FIRST_VERSION });
  }

  /** A new category's fields, checked (InvalidValueError): a use case checks them before it takes an id. */
  static validate(input: { name: string; description?: string | null }): Omit<CategoryProps, 'id' | 'version'> {
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

  get version(): number {
    return this.props.version;
  }

  /** A change of the category is stored: its version goes one up, as the database counts it (FIRST_VERSION). */
  advanceVersion(): void {
    this.props.version += 1;
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
