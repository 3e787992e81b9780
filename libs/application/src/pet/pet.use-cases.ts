import { Injectable } from '@nestjs/common';
import { InventoryItem, Pet, PetNotFoundError, PetStatus, StockRules } from '@petstore/domain';
import { InventoryRepository } from '../inventory/inventory.repository';
import { UnitOfWork } from '../ports';
import { Page, PageRequest } from '../shared/page';
import { PetFilter, PetRepository } from './pet.repository';

/**
 * Open orders of a pet, read by the hand-change table (`→ sold`) and by deletion (I6).
 * Orders arrive with the store; until then no pet has any. The store replaces each use of
 * this constant with a count taken inside the command's transaction.
 */
const NO_OPEN_ORDERS_YET = 0;

export interface CreatePetCommand {
  name: string;
  categoryId: number;
  status?: PetStatus;
}

/** Creates the pet and its inventory entry (1 unit if available, else 0) in one transaction. */
@Injectable()
export class CreatePet {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly pets: PetRepository,
    private readonly inventory: InventoryRepository,
  ) {}

  execute(command: CreatePetCommand): Promise<Pet> {
    const pet = Pet.create(command);
    return this.uow.run(async () => {
      const saved = await this.pets.save(pet);
      await this.inventory.create(InventoryItem.forNewPet(saved));
      return saved;
    });
  }
}

export interface UpdatePetCommand {
  id: number;
  name?: string;
  categoryId?: number;
  status?: PetStatus;
}

/**
 * A partial update. A status change goes through the hand-change table
 * (`invalid_status_transition`); `→ sold` also empties the stock.
 */
@Injectable()
export class UpdatePet {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly pets: PetRepository,
    private readonly inventory: InventoryRepository,
  ) {}

  execute(command: UpdatePetCommand): Promise<Pet> {
    return this.uow.run(async () => {
      const pet = await this.pets.lockById(command.id);
      if (!pet) throw new PetNotFoundError(command.id);
      if (command.name !== undefined) pet.rename(command.name);
      if (command.categoryId !== undefined) pet.moveToCategory(command.categoryId);
      if (command.status !== undefined) {
        const stock = await this.inventory.lockByPetId(pet.id);
        if (!stock) throw new Error(`Pet ${pet.id} has no inventory entry.`);
        StockRules.changeStatusByHand({ pet, inventory: stock, to: command.status, openOrders: NO_OPEN_ORDERS_YET });
        await this.inventory.save(stock);
      }
      return this.pets.save(pet);
    });
  }
}

/** Deletes the pet; its inventory entry goes with it. */
@Injectable()
export class DeletePet {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly pets: PetRepository,
  ) {}

  execute(id: number): Promise<void> {
    return this.uow.run(async () => {
      // The pet's row stays locked until the delete commits, so a check made here holds.
      const pet = await this.pets.lockById(id);
      if (!pet) throw new PetNotFoundError(id);
      pet.assertDeletable(NO_OPEN_ORDERS_YET);
      await this.pets.delete(id);
    });
  }
}

@Injectable()
export class PetQueries {
  constructor(private readonly pets: PetRepository) {}

  async get(id: number): Promise<Pet> {
    const pet = await this.pets.findById(id);
    if (!pet) throw new PetNotFoundError(id);
    return pet;
  }

  list(filter: PetFilter, page: PageRequest): Promise<Page<Pet>> {
    return this.pets.list(filter, page);
  }
}
