import { Injectable } from '@nestjs/common';
import { Stock, Pet, PetNotFoundError, PetStatus, StockRules } from '@petstore/domain';
import { StockRepository } from '../stock/stock.repository';
import { OpenOrders } from '../stock/open-orders';
import { Clock, UnitOfWork } from '../ports';
import { assertPrecondition, Precondition } from '../common/precondition';
import { Page, PageRequest } from '../common/page';
import { recordStockLevel, StockCommand } from '../stock/stock-command';
import { EventRecorder } from '../events/event.ports';
import { PetFilter, PetRepository } from '../stock/pet.repository';

export interface CreatePetCommand {
  name: string;
  categoryId: number;
  status?: PetStatus;
}

/**
 * Creates the pet and its stock entry (1 unit if available, else 0) in one transaction, with its events: `pet.created`
 * and its stock entry's (recordStockLevel: the new entry), so that a storefront following the catalogue has both.
 */
@Injectable()
export class CreatePet {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly pets: PetRepository,
    private readonly stocks: StockRepository,
    private readonly clock: Clock,
    private readonly events: EventRecorder,
  ) {}

  execute(command: CreatePetCommand): Promise<Pet> {
    // Bad input is refused at once (it throws), before a transaction or an id is taken for it.
    const fields = Pet.validate(command);
    return this.uow.run(async () => {
      const pet = Pet.create({ id: await this.pets.nextId(), ...fields, now: this.clock.now() });
      await this.pets.add(pet);
      const stock = Stock.forNewPet(pet);
      await this.stocks.create(stock);
      await this.events.record('pet.created', pet);
      await recordStockLevel(this.events, pet, stock);
      return pet;
    });
  }
}

export interface UpdatePetCommand {
  id: number;
  name?: string;
  categoryId?: number;
  status?: PetStatus;
  /** The state the caller expects the pet in (If-Match), checked under the pet's lock. */
  precondition?: Precondition<Pet>;
}

/**
 * A partial update. A status change goes through the hand-change table
 * (`invalid_status_transition`); `→ sold` also empties the stock. A StockCommand: the pet and its
 * stock are locked (pet first) and saved if they changed, with their events (the pet's, its stock entry's);
 * an update that changes nothing records none.
 */
@Injectable()
export class UpdatePet {
  constructor(private readonly stock: StockCommand) {}

  async execute(command: UpdatePetCommand): Promise<Pet> {
    const target = { petId: command.id, missing: (id: number) => new PetNotFoundError(id) };
    const { pet } = await this.stock.run(target, async ({ pet, stock, openOrders }) => {
      assertPrecondition(command.precondition, pet);
      if (command.name !== undefined) pet.rename(command.name);
      if (command.categoryId !== undefined) pet.moveToCategory(command.categoryId);
      if (command.status !== undefined) {
        StockRules.changeStatusByHand({ pet, stock, to: command.status, openOrders: await openOrders() });
      }
    });
    return pet;
  }
}

/** Deletes the pet; its stock entry goes with it. Records `pet.deleted` (the pet as it was). */
@Injectable()
export class DeletePet {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly pets: PetRepository,
    private readonly orders: OpenOrders,
    private readonly events: EventRecorder,
  ) {}

  /** `precondition`: the state the caller expects the pet in (If-Match), checked under the pet's lock. */
  execute(id: number, precondition?: Precondition<Pet>): Promise<void> {
    return this.uow.run(async () => {
      // The pet's row stays locked until the delete commits, so a check made here holds.
      const pet = await this.pets.lockById(id);
      if (!pet) throw new PetNotFoundError(id);
      assertPrecondition(precondition, pet);
      // Orders of a pet are opened only under this same lock, so the count stays true until the commit.
      pet.assertDeletable(await this.orders.countForPet(id));
      await this.pets.delete(id);
      await this.events.record('pet.deleted', pet);
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
