import { InvalidValueError } from '../common/domain-error';
import { LIMITS } from '../common/limits';
import { boundedInteger } from '../common/text';
import { FIRST_VERSION } from '../common/version';
import type { Pet } from '../pet/pet';
import type { PetStatus } from '../pet/pet-status';
import { InsufficientStockError, StockLimitExceededError } from './stock.errors';

export interface StockProps {
  petId: number;
  quantity: number;
  /**
   * The version of the entry as the API shows it (`InventoryItem`, whose status is the pet's): FIRST_VERSION when
   * created, one more for each stored change of its quantity and one more for each of its pet's status.
   */
  version: number;
}

/**
 * The stock of one pet: exactly one per pet, created with it, identified by the pet's id.
 * Its public `status` is the pet's status, so it is not kept here. `quantity` never
 * leaves 0 … LIMITS.stockQuantity.max (I1).
 */
export class Stock {
  private constructor(private readonly props: StockProps) {}

  /**
   * The entry created with a pet: 1 unit if the pet starts `available`, else 0 (a pet
   * created `pending` is a hold, one created `sold` has nothing to sell).
   * It takes the pet's id, so build it once the pet has been given one.
   */
  static forNewPet(pet: Pet): Stock {
    return new Stock({
      petId: pet.id,
      quantity: Stock.initialQuantityFor(pet.status),
      version: FIRST_VERSION,
    });
  }

  static initialQuantityFor(status: PetStatus): number {
    return status === 'available' ? 1 : 0;
  }

  static restore(props: StockProps): Stock {
    return new Stock({ ...props });
  }

  get petId(): number {
    return this.props.petId;
  }
  get quantity(): number {
    return this.props.quantity;
  }
  get version(): number {
    return this.props.version;
  }
  get isEmpty(): boolean {
    return this.props.quantity === 0;
  }

  /**
   * A change of the entry is stored, its quantity's or its pet's status (each counts once, as the database counts
   * them: FIRST_VERSION): its version goes one up.
   */
  advanceVersion(): void {
    this.props.version += 1;
  }

  /** Units go into an order. Refused, with nothing changed, when fewer are in stock. */
  take(units: number): void {
    Stock.checkUnits(units);
    if (units > this.props.quantity) {
      throw new InsufficientStockError(this.props.petId, units, this.props.quantity);
    }
    this.props.quantity -= units;
  }

  /** Units of a cancelled order come back (I4). */
  giveBack(units: number): void {
    Stock.checkUnits(units);
    const quantity = this.props.quantity + units;
    if (quantity > LIMITS.stockQuantity.max) {
      throw new StockLimitExceededError(this.props.petId, quantity, LIMITS.stockQuantity.max);
    }
    this.props.quantity = quantity;
  }

  /** An administrator sets the stock to `quantity` (an absolute count, not a delta). */
  restock(quantity: number): void {
    this.props.quantity = boundedInteger('quantity', quantity, LIMITS.stockQuantity.min, LIMITS.stockQuantity.max);
  }

  /** No unit is left to sell (the pet was marked sold by hand). */
  clear(): void {
    this.props.quantity = 0;
  }

  toSnapshot(): StockProps {
    return { ...this.props };
  }

  private static checkUnits(units: number): void {
    if (!Number.isInteger(units) || units < 1) {
      throw new InvalidValueError('quantity', 'quantity must be a positive integer.');
    }
  }
}
