import { Injectable } from '@nestjs/common';
import { Pet, Stock } from '@petstore/domain';
import { StockRepository } from './stock.repository';
import { PetRepository } from './pet.repository';
import { OpenOrders } from './open-orders';
import { UnitOfWork } from '../ports';
import { EventRecorder } from '../events/event.ports';

/** What a stock command changes, as it stands under the locks. */
export interface LockedStock {
  pet: Pet;
  stock: Stock;
  /** Open orders of the pet (OpenOrders). Exact: every command that opens or closes an order of a pet locks it. */
  openOrders(): Promise<number>;
}

/** What the command addresses: a pet (`missing` makes the error for an unknown id). */
export interface StockTarget {
  petId: number;
  missing: (petId: number) => Error;
}

/** What the command leaves, as saved. */
export interface StockOutcome {
  pet: Pet;
  stock: Stock;
}

/**
 * A pet and its stock entry locked in the caller's transaction (`StockCommand.lock`): change them, then `save`
 * writes what changed since the lock (or the last `save`) and records its events.
 */
export interface PetStockChange extends LockedStock {
  save(): Promise<void>;
}

/**
 * The one stock command: every change to a pet's stock or its status goes through it, a unit-of-work step over the
 * pet + stock entry pair: lock the pet, then its stock entry (`lock`); apply one StockRules rule; save the stock
 * entry and the pet if they changed. A rule that spans all stock commands is one edit here: so are the events of
 * those changes (`pet.status_changed` and `pet.updated` whichever command changed the pet, `inventory.changed`
 * whichever changed its quantity or status), recorded (EventRecorder) in the same transaction, as held writes (no
 * round trip of their own). A command that changes nothing records nothing.
 *
 * The lock order (pet → stock entry → whatever the caller locks next, an order) is the same for every command, so
 * two commands on one pet run one after the other and no two wait on each other in a cycle (no deadlock). The
 * catalogue's commands use `run`; ordering reaches it through StockReservations only.
 */
@Injectable()
export class StockCommand {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly pets: PetRepository,
    private readonly stocks: StockRepository,
    private readonly orders: OpenOrders,
    private readonly events: EventRecorder,
  ) {}

  /** One transaction, or a step of the caller's (`UnitOfWork.run` joins an outer one): lock, `change`, save. */
  run(target: StockTarget, change: (locked: LockedStock) => void | Promise<void>): Promise<StockOutcome> {
    return this.uow.run(async () => {
      const locked = await this.lock(target.petId);
      if (!locked) throw target.missing(target.petId);
      await change(locked);
      await locked.save();
      return { pet: locked.pet, stock: locked.stock };
    });
  }

  /**
   * The pet and its stock entry, locked in one statement, inside the caller's unit of work; null for an unknown pet.
   * Every pet has its entry, created with it: when the pair is not found, a read tells an unknown pet from a pet
   * without an entry (a bug).
   */
  async lock(petId: number): Promise<PetStockChange | null> {
    const locked = await this.stocks.lockWithPet(petId);
    if (!locked) {
      if (await this.pets.findById(petId)) throw new Error(`Pet ${petId} has no stock entry.`);
      return null;
    }
    const { pet, stock } = locked;
    let before = stateOf(pet, stock);
    return {
      pet,
      stock,
      openOrders: () => this.orders.countForPet(petId),
      save: async () => {
        await this.save(pet, stock, before);
        before = stateOf(pet, stock);
      },
    };
  }

  private async save(pet: Pet, stock: Stock, before: ReturnType<typeof stateOf>): Promise<void> {
    const stockChanged = stock.quantity !== before.quantity;
    // The status read under the pet's lock is the one stored: the events need no read of their own.
    const statusChanged = pet.status !== before.status;
    const petChanged = changed(before.pet, pet.toSnapshot());
    // The versions the database gives the rows written below (FIRST_VERSION), so that the events carry them: the
    // stock entry counts its quantity's changes and its pet's status's (its InventoryItem shows both), the pet its own.
    if (stockChanged) stock.advanceVersion();
    if (statusChanged) stock.advanceVersion();
    if (petChanged) pet.advanceVersion();
    if (stockChanged) await this.stocks.save(stock);
    if (statusChanged) await this.events.record('pet.status_changed', pet);
    if (petChanged) {
      await this.pets.save(pet);
      await this.events.record('pet.updated', pet);
    }
    if (stockChanged || statusChanged) await recordStockLevel(this.events, pet, stock);
  }
}

/**
 * Records the event of a pet's stock entry as it now stands (its InventoryItem): after a stock command's change, and
 * for a new pet's first stock (CreatePet). The catalogue's one place that records it.
 */
export function recordStockLevel(events: EventRecorder, pet: Pet, stock: Stock): Promise<void> {
  const level = { petId: pet.id, quantity: stock.quantity, status: pet.status, version: stock.version };
  return events.record('inventory.changed', level);
}

/** The pet and its stock as they stand: what `save` compares with. */
function stateOf(pet: Pet, stock: Stock) {
  return { pet: pet.toSnapshot(), status: pet.status, quantity: stock.quantity };
}

/**
 * Whether a field of the snapshot differs (shallow: a snapshot's fields are values, or a Date the aggregate replaces
 * rather than changes). Per command, instead of comparing two JSON texts: this runs on every order.
 */
function changed<T extends object>(before: T, after: T): boolean {
  return (Object.keys(after) as Array<keyof T>).some((key) => before[key] !== after[key]);
}
