import { Injectable } from '@nestjs/common';
import { Category, CategoryNotFoundError } from '@petstore/domain';
import { UnitOfWork } from '../ports';
import { assertPrecondition, Precondition } from '../common/precondition';
import { Page, PageRequest } from '../common/page';
import { EventRecorder } from '../events/event.ports';
import { CategoryRepository } from './category.repository';

export interface CreateCategoryCommand {
  name: string;
  description?: string | null;
}

/** Creates a category and records `category.created`, in one transaction. */
@Injectable()
export class CreateCategory {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly categories: CategoryRepository,
    private readonly events: EventRecorder,
  ) {}

  /** Bad input is refused at once (it throws): no id is taken for it. */
  execute(command: CreateCategoryCommand): Promise<Category> {
    const fields = Category.validate(command);
    return this.uow.run(() => this.add(fields));
  }

  private async add(fields: CreateCategoryCommand): Promise<Category> {
    const category = Category.create({ id: await this.categories.nextId(), ...fields });
    await this.categories.add(category);
    await this.events.record('category.created', category);
    return category;
  }
}

export interface UpdateCategoryCommand {
  id: number;
  name?: string;
  description?: string | null;
  /** The state the caller expects the category in (If-Match), checked under its lock. */
  precondition?: Precondition<Category>;
}

/**
 * Under the category's row lock: two updates of one category run one after the other. Records `category.updated`
 * when the name or the description changed; an update that changes nothing writes nothing and records no event.
 */
@Injectable()
export class UpdateCategory {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly categories: CategoryRepository,
    private readonly events: EventRecorder,
  ) {}

  execute(command: UpdateCategoryCommand): Promise<Category> {
    return this.uow.run(async () => {
      const category = await this.categories.lockById(command.id);
      if (!category) throw new CategoryNotFoundError(command.id);
      assertPrecondition(command.precondition, category);
      const before = category.toSnapshot();
      if (command.name !== undefined) category.rename(command.name);
      if (command.description !== undefined) category.describe(command.description);
      const after = category.toSnapshot();
      if (after.name === before.name && after.description === before.description) return category;
      // The version the database gives the stored change (FIRST_VERSION), so that the event carries it.
      category.advanceVersion();
      await this.categories.save(category);
      await this.events.record('category.updated', category);
      return category;
    });
  }
}

/** Deletes a category (none of its pets left) and records `category.deleted` (the category as it was). */
@Injectable()
export class DeleteCategory {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly categories: CategoryRepository,
    private readonly events: EventRecorder,
  ) {}

  /** `precondition`: the state the caller expects the category in (If-Match), checked under its lock. */
  execute(id: number, precondition?: Precondition<Category>): Promise<void> {
    return this.uow.run(async () => {
      const category = await this.categories.lockById(id);
      if (!category) throw new CategoryNotFoundError(id);
      assertPrecondition(precondition, category);
      if (!(await this.categories.delete(id))) throw new CategoryNotFoundError(id);
      await this.events.record('category.deleted', category);
    });
  }
}

@Injectable()
export class CategoryQueries {
  constructor(private readonly categories: CategoryRepository) {}

  async get(id: number): Promise<Category> {
    const category = await this.categories.findById(id);
    if (!category) throw new CategoryNotFoundError(id);
    return category;
  }

  list(page: PageRequest): Promise<Page<Category>> {
    return this.categories.list(page);
  }
}
