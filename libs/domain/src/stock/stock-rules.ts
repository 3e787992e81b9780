import { Order, OrderWithdrawal } from '../order/order';
import type { Pet } from '../pet/pet';
import type { PetStatus } from '../pet/pet-status';
import type { Stock } from './stock';

/**
 * The rules that span a pet, its stock and its orders: the command table of
 * docs/domain.md ("Commands and their effects") and its hand-change table.
 * Pure and stateless; the use case loads the aggregates (stock row locked), calls one rule
 * and saves what changed, in one transaction.
 *
 * Every rule checks all it may refuse before it changes anything, so a refused command
 * leaves the aggregates as they were. Counts of open orders are the caller's (a query),
 * given as they stand before the command.
 *
 * The order rules (`placeOrder`, `completeOrder`, `cancelOrder`) are the order's change and the stock's side
 * together; the stock's side alone (`reserve`, `fulfil`, `release`) is what the catalogue applies when ordering,
 * which changes the order itself, asks it to (the application's StockReservations).
 */
export class StockRules {
  private constructor() {
    // Not instantiable: a namespace of pure rules.
  }

  /**
   * Place an order for `quantity` units. Refused unless the pet is available
   * (`pet_not_available`) and has the units (`insufficient_stock`); the input is validated
   * first. The stock shrinks by `quantity`; the pet turns `pending` when it reaches 0.
   */
  static placeOrder(input: {
    /** The new order's id (`OrderRepository.nextId()`). */
    orderId: number;
    pet: Pet;
    stock: Stock;
    quantity: number;
    shipDate?: Date | null;
    ownerId: number;
    now: Date;
  }): Order {
    const { pet, stock } = input;
    assertSamePet(pet, stock);
    const order = Order.place({
      id: input.orderId,
      petId: pet.id,
      quantity: input.quantity,
      shipDate: input.shipDate,
      ownerId: input.ownerId,
      now: input.now,
    });
    StockRules.reserve({ pet, stock, quantity: order.quantity });
    return order;
  }

  /**
   * The stock's side of placing an order: `quantity` units reserved. Refused unless the pet is available
   * (`pet_not_available`) and has the units (`insufficient_stock`); the stock shrinks by `quantity`, and the pet
   * turns `pending` when it reaches 0. Knows no order: the catalogue offers it to ordering (StockReservations).
   */
  static reserve(input: { pet: Pet; stock: Stock; quantity: number }): void {
    const { pet, stock } = input;
    assertSamePet(pet, stock);
    pet.assertOrderable();
    stock.take(input.quantity);
    if (stock.isEmpty) pet.hold();
  }

  /**
   * The stock's side of withdrawing an open order: its `quantity` units return to stock (I4; above the stock's
   * limit, `stock_limit_exceeded`), and a `pending` pet becomes `available`.
   */
  static release(input: { pet: Pet; stock: Stock; quantity: number }): void {
    const { pet, stock } = input;
    assertSamePet(pet, stock);
    stock.giveBack(input.quantity);
    if (pet.isPending) pet.makeAvailable(stock.quantity);
  }

  /**
   * The stock's side of completing an order: no stock moves (its units were taken when it was placed). The pet
   * becomes `sold` if it is `pending`, its stock is 0 and `otherOpenOrders` (open orders of the pet besides the one
   * completed) is 0.
   */
  static fulfil(input: { pet: Pet; stock: Stock; otherOpenOrders: number }): void {
    const { pet, stock, otherOpenOrders } = input;
    assertSamePet(pet, stock);
    assertCount('otherOpenOrders', otherOpenOrders);
    if (pet.isPending && stock.isEmpty && otherOpenOrders === 0) pet.markSold(otherOpenOrders);
  }

  /**
   * Complete an open order (else `order_already_complete`). No stock moves. The pet becomes
   * `sold` if it is `pending`, its stock is 0 and `otherOpenOrders` (open orders of the pet
   * besides this one) is 0.
   */
  static completeOrder(input: {
    order: Order;
    pet: Pet;
    stock: Stock;
    otherOpenOrders: number;
    at: Date;
    shipDate?: Date | null;
  }): void {
    const { order, pet, stock, otherOpenOrders } = input;
    assertSamePet(pet, stock, order);
    assertCount('otherOpenOrders', otherOpenOrders);
    order.complete(input.at, input.shipDate);
    StockRules.fulfil({ pet, stock, otherOpenOrders });
  }

  /**
   * Withdraw an open order at `at` (else `order_already_complete` or `order_already_cancelled`): `cancelled` by
   * a person, `expired` by the hold expiry. Its units return to stock (I4), once: the order is no longer open
   * afterwards; a `pending` pet becomes `available`. The order stays, as a record.
   */
  static cancelOrder(input: { order: Order; pet: Pet; stock: Stock; at: Date; how?: OrderWithdrawal }): void {
    const { order, pet, stock } = input;
    assertSamePet(pet, stock, order);
    order.assertOpen();
    StockRules.release({ pet, stock, quantity: order.quantity });
    order.cancel(input.at, input.how);
  }

  /**
   * An administrator sets the stock to `quantity`. Above 0 the pet becomes `available`
   * (from any status). At 0 an `available` pet becomes `pending` while `openOrders` remain,
   * else `sold`; a `pending` or `sold` pet keeps its status.
   */
  static setStock(input: { pet: Pet; stock: Stock; quantity: number; openOrders: number }): void {
    const { pet, stock, openOrders } = input;
    assertSamePet(pet, stock);
    assertCount('openOrders', openOrders);
    stock.restock(input.quantity);
    if (!stock.isEmpty) {
      pet.makeAvailable(stock.quantity);
    } else if (pet.isAvailable) {
      if (openOrders > 0) pet.hold();
      else pet.markSold(openOrders);
    }
  }

  /**
   * An administrator sets the status (hand-change table; else `invalid_status_transition`).
   * `→ sold` also empties the stock. Asking for the current status changes nothing (see
   * `Pet.changeStatus`): in particular `sold → sold` does not touch the stock.
   */
  static changeStatusByHand(input: { pet: Pet; stock: Stock; to: PetStatus; openOrders: number }): void {
    const { pet, stock, to, openOrders } = input;
    assertSamePet(pet, stock);
    assertCount('openOrders', openOrders);
    if (pet.status === to) return;
    pet.changeStatus(to, { quantity: stock.quantity, openOrders });
    if (to === 'sold') stock.clear();
  }
}

/** Wiring mistakes, not refusals: they surface as unexpected errors (500), never as a code. */
function assertSamePet(pet: Pet, stock: Stock, order?: Order): void {
  if (stock.petId !== pet.id) {
    throw new Error(`Stock of pet ${stock.petId} used for pet ${pet.id}.`);
  }
  if (order && order.petId !== pet.id) {
    throw new Error(`Order ${order.id} of pet ${order.petId} used for pet ${pet.id}.`);
  }
}

function assertCount(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 0) {
    throw new Error(`${name} must be a count (a non-negative integer), got ${value}.`);
  }
}
