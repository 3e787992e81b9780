import { InvalidValueError } from '../common/domain-error';
import { newId } from '../common/identity';
import { LIMITS } from '../common/limits';
import { boundedInteger } from '../common/text';
import { FIRST_VERSION } from '../common/version';
import { OrderAlreadyCancelledError, OrderAlreadyCompleteError } from './order.errors';

/**
 * Where an order stands: `placed` (open: its units are held), `completed` (fulfilled), `cancelled` (by its owner or
 * an administrator) or `expired` (cancelled by the hold expiry). Only a placed order changes; the others are records.
 */
export const ORDER_STATUSES = ['placed', 'completed', 'cancelled', 'expired'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];
/** How an open order is withdrawn: by a person, or by the hold expiry. */
export type OrderWithdrawal = 'cancelled' | 'expired';

export interface OrderProps {
  id: number;
  /**
   * The pet ordered. `null` once that pet has been deleted: only an order that is no longer open can
   * outlive its pet (a pet with open orders cannot be deleted, I6), and it stays as history.
   */
  petId: number | null;
  quantity: number;
  /** Expected ship date while open; the actual one once complete. */
  shipDate: Date | null;
  status: OrderStatus;
  /** When it was placed. */
  createdAt: Date;
  /** When its status last changed (its creation while placed). */
  statusChangedAt: Date;
  /** The account that placed it; not exposed by the API. */
  ownerId: number;
  /** FIRST_VERSION when placed; one more for each stored change of it (its status, its pet deleted). */
  version: number;
}

/**
 * A customer's order for units of one pet. Open (`placed`) until completed, cancelled or expired; an
 * order that is no longer open never becomes open again and refuses any further change (I5): it stays
 * as the store's record of what happened. Stock and pet status follow from `StockRules`, which is what
 * places, completes and cancels orders.
 */
export class Order {
  private constructor(private readonly props: OrderProps) {}

  /**
   * A new open order, with the id `OrderRepository.nextId()` gave. `shipDate` may not lie more
   * than a day before `now`.
   */
  static place(input: {
    id: number;
    petId: number;
    quantity: number;
    shipDate?: Date | null;
    ownerId: number;
    now: Date;
  }): Order {
    const now = Order.checkDate('now', input.now);
    const shipDate = input.shipDate == null ? null : Order.checkDate('shipDate', input.shipDate);
    if (shipDate && shipDate.getTime() < now.getTime() - LIMITS.shipDatePastMs.max) {
      throw new InvalidValueError('shipDate', 'shipDate may not be more than a day in the past.');
    }
    return new Order({
      id: newId(input.id),
      petId: input.petId,
      quantity: boundedInteger('quantity', input.quantity, LIMITS.orderQuantity.min, LIMITS.orderQuantity.max),
      shipDate,
      status: 'placed',
      createdAt: now,
      statusChangedAt: now,
      ownerId: input.ownerId,
      version: FIRST_VERSION,
    });
  }

  static restore(props: OrderProps): Order {
    return new Order({ ...props });
  }

  get id(): number {
    return this.props.id;
  }
  get petId(): number | null {
    return this.props.petId;
  }
  get quantity(): number {
    return this.props.quantity;
  }
  get shipDate(): Date | null {
    return this.props.shipDate;
  }
  get status(): OrderStatus {
    return this.props.status;
  }
  get createdAt(): Date {
    return this.props.createdAt;
  }
  get statusChangedAt(): Date {
    return this.props.statusChangedAt;
  }
  /** The specification's `complete`: fulfilled. */
  get isComplete(): boolean {
    return this.props.status === 'completed';
  }
  /** Withdrawn without being fulfilled (cancelled or expired): its units went back to stock. */
  get isCancelled(): boolean {
    return this.props.status === 'cancelled' || this.props.status === 'expired';
  }
  /** Placed and neither completed nor withdrawn: its units are held for the customer. */
  get isOpen(): boolean {
    return this.props.status === 'placed';
  }
  get ownerId(): number {
    return this.props.ownerId;
  }
  get version(): number {
    return this.props.version;
  }

  /** A change of the order is stored: its version goes one up, as the database counts it (FIRST_VERSION). */
  advanceVersion(): void {
    this.props.version += 1;
  }

  /** Refuses an order that is no longer open (completed, cancelled or expired); changes nothing. */
  assertOpen(): void {
    if (this.props.status === 'completed') throw new OrderAlreadyCompleteError(this.props.id);
    if (this.isCancelled) throw new OrderAlreadyCancelledError(this.props.id, this.props.status as OrderWithdrawal);
  }

  /**
   * Fulfil the order at `at`. Its ship date becomes `shipDate` if given (the actual one, which may
   * lie in the past), else the one it had, else `at`.
   */
  complete(at: Date, shipDate?: Date | null): void {
    this.assertOpen();
    const completedAt = Order.checkDate('at', at);
    const given = shipDate == null ? null : Order.checkDate('shipDate', shipDate);
    this.props.shipDate = given ?? this.props.shipDate ?? completedAt;
    this.props.status = 'completed';
    this.props.statusChangedAt = completedAt;
  }

  /**
   * Withdraw an open order at `at`, by a person (`cancelled`) or by the hold expiry (`expired`); its units go
   * back to stock (`StockRules.cancelOrder`).
   */
  cancel(at: Date, how: OrderWithdrawal = 'cancelled'): void {
    this.assertOpen();
    this.props.statusChangedAt = Order.checkDate('at', at);
    this.props.status = how;
  }

  toSnapshot(): OrderProps {
    return { ...this.props };
  }

  private static checkDate(field: string, value: Date): Date {
    if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
      throw new InvalidValueError(field, `${field} must be a valid date-time.`);
    }
    return new Date(value.getTime());
  }
}
