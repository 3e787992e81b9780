import { Injectable } from '@nestjs/common';
import { Account, Order, OrderNotFoundError, StockRules, UnknownPetError } from '@petstore/domain';
import { InventoryRepository } from '../inventory/inventory.repository';
import { PetRepository } from '../pet/pet.repository';
import { Clock, UnitOfWork } from '../ports';
import { Page, PageRequest } from '../shared/page';
import { lockStock } from '../stock/lock-stock';
import { OrderRepository } from './order.repository';
import { WebhookEvents } from '../webhook/webhook-events';

/*
 * Every command below is one transaction that locks in one order: the pet, then its inventory
 * entry, then the order. Two commands on the same pet therefore run one after the other, and two
 * commands never wait on each other in a cycle (no deadlock).
 */

export interface PlaceOrderCommand {
  petId: number;
  quantity: number;
  shipDate?: Date | null;
  /** The account placing the order; it owns the order. */
  ownerId: number;
}

@Injectable()
export class PlaceOrder {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly pets: PetRepository,
    private readonly inventory: InventoryRepository,
    private readonly orders: OrderRepository,
    private readonly clock: Clock,
    private readonly events: WebhookEvents,
  ) {}

  execute(command: PlaceOrderCommand): Promise<Order> {
    return this.uow.run(async () => {
      const pet = await this.pets.lockById(command.petId);
      if (!pet) throw new UnknownPetError(command.petId);
      const stock = await lockStock(this.inventory, pet.id);
      const status = pet.status;
      const order = StockRules.placeOrder({
        pet,
        inventory: stock,
        quantity: command.quantity,
        shipDate: command.shipDate,
        ownerId: command.ownerId,
        now: this.clock.now(),
      });
      await this.inventory.save(stock);
      if (pet.status !== status) await this.pets.save(pet);
      return this.events.order('order.placed', await this.orders.save(order));
    });
  }
}

export interface CompleteOrderCommand {
  orderId: number;
  /** The actual ship date; default: the one given when ordering, else the completion time. */
  shipDate?: Date | null;
}

@Injectable()
export class CompleteOrder {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly pets: PetRepository,
    private readonly inventory: InventoryRepository,
    private readonly orders: OrderRepository,
    private readonly clock: Clock,
    private readonly events: WebhookEvents,
  ) {}

  private get repositories() {
    return { pets: this.pets, inventory: this.inventory, orders: this.orders };
  }

  /** Administrators only (the caller checks the role). */
  execute(command: CompleteOrderCommand): Promise<Order> {
    return this.uow.run(async () => {
      const { order, pet, stock } = await lockOrderWithStock(command.orderId, null, this.repositories);
      const status = pet.status;
      StockRules.completeOrder({
        order,
        pet,
        inventory: stock,
        otherOpenOrders: await this.orders.countOpenForPet(pet.id, order.id),
        at: this.clock.now(),
        shipDate: command.shipDate,
      });
      if (pet.status !== status) await this.pets.save(pet);
      await this.events.order('order.completed', order);
      return this.orders.save(order);
    });
  }
}

@Injectable()
export class CancelOrder {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly pets: PetRepository,
    private readonly inventory: InventoryRepository,
    private readonly orders: OrderRepository,
    private readonly events: WebhookEvents,
  ) {}

  private get repositories() {
    return { pets: this.pets, inventory: this.inventory, orders: this.orders };
  }

  /** The owner or an administrator; anyone else's order is not found. Its units go back to stock. */
  execute(command: { orderId: number; by: Account }): Promise<void> {
    return this.uow.run(async () => {
      const { order, pet, stock } = await lockOrderWithStock(command.orderId, command.by, this.repositories);
      const status = pet.status;
      StockRules.cancelOrder({ order, pet, inventory: stock });
      await this.inventory.save(stock);
      if (pet.status !== status) await this.pets.save(pet);
      await this.events.order('order.cancelled', order);
      await this.orders.delete(order.id);
    });
  }
}

/**
 * Finds the order (refusing someone else's as not found, and a completed one at once: it never
 * reopens, I5), then locks its pet, the pet's inventory entry and the order, in that order, and
 * returns them as they stand under the locks.
 */
async function lockOrderWithStock(
  orderId: number,
  by: Account | null,
  repositories: { pets: PetRepository; inventory: InventoryRepository; orders: OrderRepository },
) {
  const { pets, inventory, orders } = repositories;
  const found = await orders.findById(orderId);
  if (!found || (by && !by.mayActFor(found.ownerId))) throw new OrderNotFoundError(orderId);
  found.assertOpen();
  // An open order always has its pet (a pet with open orders cannot be deleted, I6).
  const petId = found.petId as number;
  const pet = await pets.lockById(petId);
  const stock = pet && (await lockStock(inventory, petId));
  const order = await orders.lockById(orderId);
  // Between the first read and the locks the order may have been completed or cancelled.
  if (!order) throw new OrderNotFoundError(orderId);
  order.assertOpen();
  if (!pet || !stock) throw new Error(`Open order ${orderId} has no pet ${petId}.`);
  return { order, pet, stock };
}

/** Who sees what: a customer its own orders, an administrator all of them. */
@Injectable()
export class OrderQueries {
  constructor(private readonly orders: OrderRepository) {}

  async get(id: number, viewer: Account): Promise<Order> {
    const order = await this.orders.findById(id);
    if (!order || !viewer.mayActFor(order.ownerId)) throw new OrderNotFoundError(id);
    return order;
  }

  list(filter: { complete?: boolean; petId?: number }, viewer: Account, page: PageRequest): Promise<Page<Order>> {
    return this.orders.list({ ...filter, ownerId: viewer.isAdmin ? undefined : viewer.id }, page);
  }
}
