import { Injectable } from '@nestjs/common';
import { Account, Stock, Order, OrderNotFoundError, Pet } from '@petstore/domain';
import { StockRepository } from './stock.repository';
import { OrderRepository } from '../order/order.repository';
import { PetRepository } from '../pet/pet.repository';
import { UnitOfWork } from '../ports';
import { EventRecorder } from '../events/event.ports';
import { visibleTo } from '../common/visible-to';

/** What a stock command changes, as it stands under the locks. */
export interface LockedStock {
  pet: Pet;
  stock: Stock;
  /** The order addressed (an order target); null for a pet target. */
  order: Order | null;
  /**
   * Open orders of the pet, not counting `order`. Exact: every command that opens or closes an
   * order of a pet holds that pet's lock.
   */
  openOrders(): Promise<number>;
}

/** The locked aggregates with an order: what `run` gives an order target. */
export type LockedOrderStock = LockedStock & { order: Order };

/**
 * What the command addresses: a pet (`missing` makes the error for an unknown id), or an open
 * order, as `by` may see it (null: the service itself, which sees every order).
 */
export type StockTarget =
  | { petId: number; missing: (petId: number) => Error }
  | { orderId: number; by: Account | null };

/** What the command leaves, as saved. `order` is null when there is none (a pet target that placed none). */
export interface StockOutcome {
  pet: Pet;
  stock: Stock;
  order: Order | null;
}

/**
 * The one stock command: every change to a pet's stock, its status or its orders goes through
 * `run`, a unit-of-work step over the pet + stock entry pair (and the order addressed):
 * lock the pet, then its stock entry, then the order; let `change` apply one StockRules rule;
 * save the stock entry and the pet if they changed, then the order (a new one `change`
 * returns, or the order addressed, which stays once cancelled). A rule that spans all stock
 * commands is one edit here: so are the events of those changes (`order.placed`,
 * `order.completed`, `order.cancelled`; `pet.status_changed` and `pet.updated` whichever command changed the
 * pet, `inventory.changed` whichever changed its quantity or status), recorded (EventRecorder) in the same
 * transaction, as held writes (no round trip of their own). A command that changes nothing records nothing.
 *
 * The lock order (pet → stock entry → order) is the same for every command, so two commands
 * on one pet run one after the other and no two wait on each other in a cycle (no deadlock).
 */
@Injectable()
export class StockCommand {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly pets: PetRepository,
    private readonly stocks: StockRepository,
    private readonly orders: OrderRepository,
    private readonly events: EventRecorder,
  ) {}

  /** One transaction, or a step of the caller's (`UnitOfWork.run` joins an outer one). */
  run(
    target: { orderId: number; by: Account | null },
    change: (locked: LockedOrderStock) => void | Promise<void>,
  ): Promise<StockOutcome>;
  run(
    target: { petId: number; missing: (petId: number) => Error },
    change: (locked: LockedStock) => Order | void | Promise<Order | void>,
  ): Promise<StockOutcome>;
  run(target: StockTarget, change: (locked: LockedOrderStock) => Order | void | Promise<Order | void>) {
    return this.uow.run(async () => {
      const locked = 'orderId' in target ? await this.lockOrder(target.orderId, target.by) : await this.lockPet(target);
      const { pet, stock } = locked;
      const before = {
        pet: pet.toSnapshot(),
        status: pet.status,
        quantity: stock.quantity,
        order: locked.order?.toSnapshot() ?? null,
      };
      const placed = await change(locked as LockedOrderStock);
      const stockChanged = stock.quantity !== before.quantity;
      // The status read under the pet's lock is the one stored: the events need no read of their own.
      const statusChanged = pet.status !== before.status;
      const petChanged = changed(before.pet, pet.toSnapshot());
      // The versions the database gives the rows written below (FIRST_VERSION), so that the events carry them: the
      // stock entry counts its quantity's changes and its pet's status's (its InventoryItem shows both), the pet
      // its own changes.
      if (stockChanged) stock.advanceVersion();
      if (statusChanged) stock.advanceVersion();
      if (petChanged) pet.advanceVersion();
      if (stockChanged) await this.stocks.save(stock);
      if (statusChanged) await this.events.record('pet.status_changed', pet);
      if (petChanged) {
        await this.pets.save(pet);
        await this.events.record('pet.updated', pet);
      }
      if (stockChanged || statusChanged) {
        const level = { petId: pet.id, quantity: stock.quantity, status: pet.status, version: stock.version };
        await this.events.record('inventory.changed', level);
      }
      const order = placed ?? locked.order;
      if (order && !placed && before.order && changed(before.order, order.toSnapshot())) order.advanceVersion();
      const savedOrder = order && (await this.saveOrder(order, Boolean(placed)));
      if (savedOrder) await this.reportOrder(savedOrder, Boolean(placed));
      return { pet, stock, order: savedOrder };
    });
  }

  /** The event carries the order as it is after the change (an expired order's `order.cancelled` says `expired`). */
  private async reportOrder(order: Order, isNew: boolean): Promise<void> {
    if (isNew) await this.events.record('order.placed', order);
    else if (order.isCancelled) await this.events.record('order.cancelled', order);
    else if (order.isComplete) await this.events.record('order.completed', order);
  }

  /** A new order (`change` returned it) is added, the order addressed saved (orders are kept as records). */
  private async saveOrder(order: Order, isNew: boolean): Promise<Order> {
    if (isNew) await this.orders.add(order);
    else await this.orders.save(order);
    return order;
  }

  private async lockPet(target: { petId: number; missing: (petId: number) => Error }): Promise<LockedStock> {
    const { pet, stock } = await this.lockPetAndStock(target.petId, () => target.missing(target.petId));
    return { pet, stock, order: null, openOrders: () => this.orders.countOpenForPet(pet.id) };
  }

  /**
   * Finds the order (refusing someone else's as not found, and a completed one at once: it never
   * reopens, I5), then locks its pet, the pet's stock entry and the order, in that order.
   */
  private async lockOrder(orderId: number, by: Account | null): Promise<LockedOrderStock> {
    const found = visibleTo(
      await this.orders.findById(orderId),
      by ?? undefined,
      () => new OrderNotFoundError(orderId),
    );
    found.assertOpen();
    // An open order always has its pet (a pet with open orders cannot be deleted, I6).
    const petId = found.petId as number;
    const { pet, stock } = await this.lockPetAndStock(petId, () => new Error(`Open order ${orderId} has no pet.`));
    const order = await this.orders.lockById(orderId);
    // Between the first read and the locks the order may have been completed or cancelled.
    if (!order) throw new OrderNotFoundError(orderId);
    order.assertOpen();
    return { pet, stock, order, openOrders: () => this.orders.countOpenForPet(petId, orderId) };
  }

  /**
   * The pet and its stock entry, locked in one statement. Every pet has its entry, created with it: when the pair
   * is not found, a read tells an unknown pet (`missing`) from a pet without an entry (a bug).
   */
  private async lockPetAndStock(petId: number, missing: () => Error): Promise<{ pet: Pet; stock: Stock }> {
    const locked = await this.stocks.lockWithPet(petId);
    if (locked) return locked;
    if (await this.pets.findById(petId)) throw new Error(`Pet ${petId} has no stock entry.`);
    throw missing();
  }
}

/**
 * Whether a field of the snapshot differs (shallow: a snapshot's fields are values, or a Date the aggregate replaces
 * rather than changes). Per command, instead of comparing two JSON texts: this runs on every order.
 */
function changed<T extends object>(before: T, after: T): boolean {
  return (Object.keys(after) as Array<keyof T>).some((key) => before[key] !== after[key]);
}
