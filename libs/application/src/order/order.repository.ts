import { Order, OrderStatus } from '@petstore/domain';
import { Page, PageRequest } from '../common/page';

export interface OrderFilter {
  /** Only this account's orders (what a customer sees); absent for an administrator. */
  ownerId?: number;
  complete?: boolean;
  petId?: number;
  /** Any of these statuses. */
  status?: OrderStatus[];
}

export abstract class OrderRepository {
  abstract findById(id: number): Promise<Order | null>;
  /**
   * The order, its row locked until the transaction ends (`SELECT … FOR UPDATE`). Every command
   * locks in one order, pet → stock entry → order, so take the pet and its stock first.
   */
  abstract lockById(id: number): Promise<Order | null>;
  /** Keyset page in id order. */
  abstract list(filter: OrderFilter, page: PageRequest): Promise<Page<Order>>;
  /**
   * Open (placed) orders of the pet, not counting `exceptOrderId`. Exact when the pet is
   * locked: every command that opens or closes an order of a pet locks that pet first.
   */
  abstract countOpenForPet(petId: number, exceptOrderId?: number): Promise<number>;
  /**
   * Units in the owner's open orders. Exact when the owner's account row is locked first (`AccountRepository.lock`),
   * and read by a statement of its own after that lock: two commands that check a customer's hold limit on this
   * count then run one after the other, and the second sees the first's order.
   */
  abstract countOpenUnits(ownerId: number): Promise<number>;
  /**
   * Ids of the open orders placed before `placedBefore`, ascending, after `afterId` (keyset). The
   * time an order was placed is the database's at its insert (the service's clock should agree).
   */
  abstract listOpenPlacedBefore(placedBefore: Date, page: { limit: number; afterId: number }): Promise<number[]>;
  /** A new order's id, taken from the table's sequence before the order is created (never reused). */
  abstract nextId(): Promise<number>;
  /** Stores a new order; the time it was placed is the database's at this insert. */
  abstract add(order: Order): Promise<void>;
  /** Writes a stored order's changes (ship date, status and when it changed). Orders are never deleted. */
  abstract save(order: Order): Promise<void>;
}
