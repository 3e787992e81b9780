import { Injectable } from '@nestjs/common';
import { PetNotFoundError, StockRules } from '@petstore/domain';
import { Page, PageRequest } from '../common/page';
import { assertPrecondition, Precondition } from '../common/precondition';
import { StockCommand } from './stock-command';
import { StockLevel, StockLevelFilter, StockLevels } from './stock-levels';

export interface SetStockCommand {
  petId: number;
  quantity: number;
  /** The state the caller expects the stock entry in (If-Match), checked under the locks. */
  precondition?: Precondition<StockLevel>;
}

/** An administrator sets a pet's stock to a count; the pet's status follows ("Set stock" in docs/domain.md). */
@Injectable()
export class SetStock {
  constructor(private readonly stock: StockCommand) {}

  async execute(command: SetStockCommand): Promise<StockLevel> {
    const target = { petId: command.petId, missing: (id: number) => new PetNotFoundError(id) };
    const { pet, stock } = await this.stock.run(target, async ({ pet, stock, openOrders }) => {
      const level = { petId: pet.id, quantity: stock.quantity, status: pet.status, version: stock.version };
      assertPrecondition(command.precondition, level);
      StockRules.setStock({ pet, stock, quantity: command.quantity, openOrders: await openOrders() });
    });
    return { petId: pet.id, quantity: stock.quantity, status: pet.status, version: stock.version };
  }
}

@Injectable()
export class StockQueries {
  constructor(private readonly levels: StockLevels) {}

  async get(petId: number): Promise<StockLevel> {
    const level = await this.levels.find(petId);
    if (!level) throw new PetNotFoundError(petId);
    return level;
  }

  list(filter: StockLevelFilter, page: PageRequest): Promise<Page<StockLevel>> {
    return this.levels.list(filter, page);
  }
}
