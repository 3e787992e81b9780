import { Injectable } from '@nestjs/common';
import { Category, CategoryNotFoundError } from '@petstore/domain';
import { UnitOfWork } from '../ports';
import { assertPrecondition, Precondition } from '../common/precondition';
import { Page, PageRequest } from '../common/page';
import { CategoryRepository } from './category.repository';

export interface CreateCategoryCommand {
  name: string;
  description?: string | null;
}

@Injectable()
export class CreateCategory {
  constructor(private readonly categories: CategoryRepository) {}

  /** Bad input is refused at once (it throws): no id is taken for it. */
  execute(command: CreateCategoryCommand): Promise<Category> {
    return this.add(Category.validate(command));
  }

  private async add(fields: CreateCategoryCommand): Promise<Category> {
    const category = Category.create({ id: await this.categories.nextId(), ...fields });
    await this.categories.add(category);
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

/** Under the category's row lock: two updates of one category run one after the other. */
@Injectable()
export class UpdateCategory {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly categories: CategoryRepository,
  ) {}

  execute(command: UpdateCategoryCommand): Promise<Category> {
    return this.uow.run(async () => {
      const category = await this.categories.lockById(command.id);
      if (!category) throw new CategoryNotFoundError(command.id);
      assertPrecondition(command.precondition, category);
      if (command.name !== undefined) category.rename(command.name);
      if (command.description !== undefined) category.describe(command.description);
      await this.categories.save(category);
      return category;
    });
  }
}

@Injectable()
export class DeleteCategory {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly categories: CategoryRepository,
  ) {}

  /** `precondition`: the state the caller expects the category in (If-Match), checked under its lock. */
  execute(id: number, precondition?: Precondition<Category>): Promise<void> {
    return this.uow.run(async () => {
      const category = await this.categories.lockById(id);
      if (!category) throw new CategoryNotFoundError(id);
      assertPrecondition(precondition, category);
      if (!(await this.categories.delete(id))) throw new CategoryNotFoundError(id);
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
