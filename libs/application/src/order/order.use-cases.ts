import { Injectable } from '@nestjs/common';
import {
  Account,
  assertWithinHoldLimit,
  Order,
  OrderNotFoundError,
  OrderStatus,
  StockRules,
  UnknownPetError,
} from '@petstore/domain';
import { Clock, UnitOfWork } from '../ports';
import { Page, PageRequest } from '../common/page';
import { assertPrecondition, Precondition } from '../common/precondition';
import { StockCommand } from '../stock/stock-command';
import { OrderHoldSettings } from './order-hold.settings';
import { OrderRepository } from './order.repository';
import { visibleTo } from '../common/visible-to';

/*
 * Every command below is one StockCommand: one transaction that locks the pet, then its stock
 * entry, then the order (PlaceOrder locks the customer's account row before them).
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
    private readonly stock: StockCommand,
    private readonly orders: OrderRepository,
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
      const openUnits = limit > 0 ? await this.orders.lockOwnerAndCountOpenUnits(by.id) : 0;
      const target = { petId: command.petId, missing: (id: number) => new UnknownPetError(id) };
      const { order } = await this.stock.run(target, async (locked) => {
        const placed = StockRules.placeOrder({
          orderId: await this.orders.nextId(),
          pet: locked.pet,
          stock: locked.stock,
          quantity: command.quantity,
          shipDate: command.shipDate,
          ownerId: by.id,
          now: this.clock.now(),
        });
        assertWithinHoldLimit(openUnits, placed.quantity, limit);
        return placed;
      });
      return order as Order;
    });
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
    private readonly stock: StockCommand,
    private readonly clock: Clock,
  ) {}

  /** Administrators only (the caller checks the role). */
  async execute(command: CompleteOrderCommand): Promise<Order> {
    const target = { orderId: command.orderId, by: null };
    const { order } = await this.stock.run(target, async ({ order, pet, stock, openOrders }) => {
      assertPrecondition(command.precondition, order);
      StockRules.completeOrder({
        order,
        pet,
        stock,
        otherOpenOrders: await openOrders(),
        at: this.clock.now(),
        shipDate: command.shipDate,
      });
    });
    return order as Order;
  }
}

@Injectable()
export class CancelOrder {
  constructor(
    private readonly stock: StockCommand,
    private readonly clock: Clock,
  ) {}

  /**
   * The owner or an administrator; anyone else's order is not found. Its units go back to stock; the order
   * stays, `cancelled`, and is returned as it is now. `precondition`: the state the caller expects the order in
   * (If-Match), checked under the locks.
   */
  async execute(command: { orderId: number; by: Account; precondition?: Precondition<Order> }): Promise<Order> {
    const { order } = await this.stock.run({ orderId: command.orderId, by: command.by }, ({ order, pet, stock }) => {
      assertPrecondition(command.precondition, order);
      StockRules.cancelOrder({ order, pet, stock, at: this.clock.now() });
    });
    return order as Order;
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
