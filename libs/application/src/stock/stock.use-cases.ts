import { Injectable } from '@nestjs/common';
import { PetNotFoundError, StockRules } from '@petstore/domain';
import { InventoryRepository } from '../inventory/inventory.repository';
import { OrderRepository } from '../order/order.repository';
import { PetRepository } from '../pet/pet.repository';
import { UnitOfWork } from '../ports';
import { Page, PageRequest } from '../shared/page';
import { lockStock } from './lock-stock';
import { StockLevel, StockLevelFilter, StockLevels } from './stock-levels';

export interface SetStockCommand {
  petId: number;
  quantity: number;
}

/** An administrator sets a pet's stock to a count; the pet's status follows ("Set stock" in docs/domain.md). */
@Injectable()
export class SetStock {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly pets: PetRepository,
    private readonly inventory: InventoryRepository,
    private readonly orders: OrderRepository,
  ) {}

  execute(command: SetStockCommand): Promise<StockLevel> {
    return this.uow.run(async () => {
      const pet = await this.pets.lockById(command.petId);
      if (!pet) throw new PetNotFoundError(command.petId);
      const stock = await lockStock(this.inventory, pet.id);
      const status = pet.status;
      StockRules.setStock({
        pet,
        inventory: stock,
        quantity: command.quantity,
        openOrders: await this.orders.countOpenForPet(pet.id),
      });
      await this.inventory.save(stock);
      if (pet.status !== status) await this.pets.save(pet);
      return { petId: pet.id, quantity: stock.quantity, status: pet.status };
    });
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
