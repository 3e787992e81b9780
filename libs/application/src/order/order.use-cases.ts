import { Injectable } from '@nestjs/common';
import {
  Account,
  assertWithinHoldLimit,
  Order,
  OrderNotFoundError,
  OrderStatus,
  UnknownPetError,
} from '@petstore/domain';
import { Clock, UnitOfWork } from '../ports';
import { Page, PageRequest } from '../common/page';
import { assertPrecondition, Precondition } from '../common/precondition';
import { AccountRepository } from '../account/account.repository';
import { OrderCommand } from './order-command';
import { OrderHoldSettings } from './order-hold.settings';
import { OrderRepository } from './order.repository';
import { visibleTo } from '../common/visible-to';

/*
 * Every command below is one transaction that locks the pet, then its stock entry (the catalogue's
 * StockReservations), then the order (PlaceOrder locks the customer's account row before them), and saves the
 * order with its event after the catalogue has saved the pet and its stock (OrderCommand).
 */

export interface PlaceOrderCommand {
  petId: number;
  quantity: number;
  shipDate?: Date | null;
  /** The account placing the order; it owns the order. */
  by: Account;
}

@Injectable()
export class PlaceOrder {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly command: OrderCommand,
    private readonly orders: OrderRepository,
    private readonly accounts: AccountRepository,
    private readonly clock: Clock,
    private readonly holds: OrderHoldSettings,
  ) {}

  /**
   * A customer's open units are counted under its account row's lock, taken first: two orders of
   * one customer check the hold limit one after the other, so together they cannot exceed it.
   */
  execute(command: PlaceOrderCommand): Promise<Order> {
    const { by } = command;
    const limit = by.isAdmin ? 0 : this.holds.maxOpenUnitsPerCustomer;
    return this.uow.run(async () => {
      const openUnits = limit > 0 ? await this.openUnitsOf(by.id) : 0;
      const stock = await this.command.lockStock(command.petId, (id) => new UnknownPetError(id));
      const order = Order.place({
        id: await this.orders.nextId(),
        petId: stock.petId,
        quantity: command.quantity,
        shipDate: command.shipDate,
        ownerId: by.id,
        now: this.clock.now(),
      });
      await stock.reserve(order.quantity);
      // After the pet's refusals (pet_not_available, insufficient_stock), which come first; refused, the
      // transaction rolls the reservation back with the rest.
      assertWithinHoldLimit(openUnits, order.quantity, limit);
      return this.command.add(order);
    });
  }

  /**
   * Two statements, not one: a statement that waits for the account's lock keeps the snapshot it started with,
   * so only a count read after the lock is granted sees the orders committed meanwhile.
   */
  private async openUnitsOf(ownerId: number): Promise<number> {
    await this.accounts.lock(ownerId);
    return this.orders.countOpenUnits(ownerId);
  }
}

export interface CompleteOrderCommand {
  orderId: number;
  /** The actual ship date; default: the one given when ordering, else the completion time. */
  shipDate?: Date | null;
  /** The state the caller expects the order in (If-Match), checked under the locks. */
  precondition?: Precondition<Order>;
}

@Injectable()
export class CompleteOrder {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly command: OrderCommand,
    private readonly clock: Clock,
  ) {}

  /** Administrators only (the caller checks the role). The pet is sold once its last open order completes. */
  execute(command: CompleteOrderCommand): Promise<Order> {
    return this.uow.run(async () => {
      const { order, stock, otherOpenOrders } = await this.command.lockOpen(command.orderId, null);
      assertPrecondition(command.precondition, order);
      const others = await otherOpenOrders();
      order.complete(this.clock.now(), command.shipDate);
      await stock.fulfil(others);
      return this.command.save(order);
    });
  }
}

@Injectable()
export class CancelOrder {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly command: OrderCommand,
    private readonly clock: Clock,
  ) {}

  /**
   * The owner or an administrator; anyone else's order is not found. Its units go back to stock; the order
   * stays, `cancelled`, and is returned as it is now. `precondition`: the state the caller expects the order in
   * (If-Match), checked under the locks.
   */
  execute(command: { orderId: number; by: Account; precondition?: Precondition<Order> }): Promise<Order> {
    return this.uow.run(async () => {
      const { order, stock } = await this.command.lockOpen(command.orderId, command.by);
      assertPrecondition(command.precondition, order);
      await stock.release(order.quantity);
      order.cancel(this.clock.now());
      return this.command.save(order);
    });
  }
}

/** Who sees what: a customer its own orders, an administrator all of them. */
@Injectable()
export class OrderQueries {
  constructor(private readonly orders: OrderRepository) {}

  async get(id: number, viewer: Account): Promise<Order> {
    return visibleTo(await this.orders.findById(id), viewer, () => new OrderNotFoundError(id));
  }

  list(
    filter: { complete?: boolean; petId?: number; status?: OrderStatus[] },
    viewer: Account,
    page: PageRequest,
  ): Promise<Page<Order>> {
    return this.orders.list({ ...filter, ownerId: viewer.isAdmin ? undefined : viewer.id }, page);
  }
}
