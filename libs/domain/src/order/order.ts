import { InvalidValueError } from '../common/domain-error';
import { newId } from '../common/identity';
import { LIMITS } from '../common/limits';
import { boundedInteger } from '../common/text';
import { OrderAlreadyCompleteError, OrderNotFoundError } from './order.errors';

export interface OrderProps {
  id: number;
  /**
   * The pet ordered. `null` once that pet has been deleted: only a completed order can outlive
   * its pet (a pet with open orders cannot be deleted, I6), and it stays as history.
   */
  petId: number | null;
  quantity: number;
  /** Expected ship date while open; the actual one once complete. */
  shipDate: Date | null;
  complete: boolean;
  /** The account that placed it; not exposed by the API. */
  ownerId: number;
}

/**
 * A customer's order for units of one pet. Open until completed; a completed order never
 * becomes open again and cannot be cancelled (I5). A cancelled order is deleted by the
 * caller; in memory it answers `isCancelled` and refuses anything further.
 * Stock and pet status follow from `StockRules`, which is what places, completes and cancels orders.
 */
export class Order {
  private cancelled = false;

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
      complete: false,
      ownerId: input.ownerId,
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
  get isComplete(): boolean {
    return this.props.complete;
  }
  get isCancelled(): boolean {
    return this.cancelled;
  }
  /** Neither completed nor cancelled: its units are held for the customer. */
  get isOpen(): boolean {
    return !this.props.complete && !this.cancelled;
  }
  get ownerId(): number {
    return this.props.ownerId;
  }

  /** Refuses a completed (or cancelled) order; changes nothing. */
  assertOpen(): void {
    if (this.cancelled) throw new OrderNotFoundError(this.props.id);
    if (this.props.complete) throw new OrderAlreadyCompleteError(this.props.id);
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
    this.props.complete = true;
  }

  /** Withdraw an open order; its units go back to stock (`StockRules.cancelOrder`). */
  cancel(): void {
    this.assertOpen();
    this.cancelled = true;
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
