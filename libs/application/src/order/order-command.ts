import { Injectable } from '@nestjs/common';
import { Account, Order, OrderNotFoundError } from '@petstore/domain';
import { ReservableStock, StockReservations } from '../stock/stock-reservations';
import { EventRecorder } from '../events/event.ports';
import { visibleTo } from '../common/visible-to';
import { OrderRepository } from './order.repository';

/** An open order under its locks, with its pet's stock (the catalogue's) locked before it. */
export interface LockedOrder {
  order: Order;
  stock: ReservableStock;
  /** Open orders of the pet besides this one. Exact: every command that opens or closes an order locks its pet. */
  otherOpenOrders(): Promise<number>;
}

/**
 * What the order commands share, as steps of the caller's unit of work: the locks, in the order every command on a
 * pet takes them (the pet and its stock entry, through the catalogue's StockReservations, then the order), and an
 * order saved with its event (`order.placed`, `order.completed`, `order.cancelled`) in the same transaction, after the
 * catalogue's own (the stock's and the pet's), as held writes.
 */
@Injectable()
export class OrderCommand {
  constructor(
    private readonly orders: OrderRepository,
    private readonly stock: StockReservations,
    private readonly events: EventRecorder,
  ) {}

  /** The pet's stock, locked: the first locks of placing an order. Unknown pet: `missing`'s error. */
  async lockStock(petId: number, missing: (petId: number) => Error): Promise<ReservableStock> {
    const stock = await this.stock.lock(petId);
    if (!stock) throw missing(petId);
    return stock;
  }

  /**
   * Finds the order (refusing someone else's as not found, and a completed or withdrawn one at once: it never
   * reopens, I5), then locks its pet, the pet's stock entry and the order, in that order. `by`: who asks (null: the
   * service itself, which sees every order).
   */
  async lockOpen(orderId: number, by: Account | null): Promise<LockedOrder> {
    const found = visibleTo(
      await this.orders.findById(orderId),
      by ?? undefined,
      () => new OrderNotFoundError(orderId),
    );
    found.assertOpen();
    // An open order always has its pet (a pet with open orders cannot be deleted, I6).
    const petId = found.petId as number;
    const stock = await this.lockStock(petId, () => new Error(`Open order ${orderId} has no pet.`));
    const order = await this.orders.lockById(orderId);
    // Between the first read and the locks the order may have been completed or cancelled.
    if (!order) throw new OrderNotFoundError(orderId);
    order.assertOpen();
    return { order, stock, otherOpenOrders: () => this.orders.countOpenForPet(petId, orderId) };
  }

  /** Stores a new order and records `order.placed`. */
  async add(order: Order): Promise<Order> {
    await this.orders.add(order);
    await this.events.record('order.placed', order);
    return order;
  }

  /**
   * Writes a changed order (orders are kept as records) and records its event, carrying the order as it is after the
   * change (an expired order's `order.cancelled` says `expired`) with the version the database gives the change (its
   * status changed: FIRST_VERSION).
   */
  async save(order: Order): Promise<Order> {
    order.advanceVersion();
    await this.orders.save(order);
    if (order.isCancelled) await this.events.record('order.cancelled', order);
    else if (order.isComplete) await this.events.record('order.completed', order);
    return order;
  }
}
