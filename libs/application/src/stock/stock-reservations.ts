import { Injectable } from '@nestjs/common';
import { StockRules } from '@petstore/domain';
import { PetStockChange, StockCommand } from './stock-command';

/**
 * A pet's stock, locked for the caller's transaction (`StockReservations.lock`): units are reserved from it, given
 * back, or a reservation fulfilled. Each call applies one StockRules rule and saves the pet and its stock entry if
 * they changed, with the catalogue's events (the pet's status, the pet, its stock entry), as every stock command
 * does; a refusal throws before anything changed, and rolls the caller's transaction back.
 */
export interface ReservableStock {
  readonly petId: number;
  /**
   * Takes `quantity` units: refused unless the pet is available (`pet_not_available`) and has them
   * (`insufficient_stock`); the pet turns `pending` when its stock reaches 0.
   */
  reserve(quantity: number): Promise<void>;
  /** Gives `quantity` reserved units back (above the limit: `stock_limit_exceeded`); a pending pet turns available. */
  release(quantity: number): Promise<void>;
  /**
   * A reservation fulfilled: no stock moves. The pet turns `sold` if it is `pending`, out of stock, and
   * `otherReservations` (those of the pet still open besides this one) is 0.
   */
  fulfil(otherReservations: number): Promise<void>;
}

/**
 * What the catalogue offers ordering: reservations of a pet's stock, by pet id and quantity, inside the caller's unit
 * of work. It knows nothing of orders; ordering calls it, never the reverse. `lock` takes the first locks of every
 * command on a pet (the pet, then its stock entry), so that the caller locks its own rows after them, in the order
 * every command takes.
 */
@Injectable()
export class StockReservations {
  constructor(private readonly stock: StockCommand) {}

  /** The pet's stock, locked until the caller's transaction ends (inside `UnitOfWork.run`); null for an unknown pet. */
  async lock(petId: number): Promise<ReservableStock | null> {
    const locked = await this.stock.lock(petId);
    return locked && reservable(locked);
  }
}

function reservable(locked: PetStockChange): ReservableStock {
  const { pet, stock } = locked;
  return {
    petId: pet.id,
    reserve: (quantity) => {
      StockRules.reserve({ pet, stock, quantity });
      return locked.save();
    },
    release: (quantity) => {
      StockRules.release({ pet, stock, quantity });
      return locked.save();
    },
    fulfil: (otherReservations) => {
      StockRules.fulfil({ pet, stock, otherOpenOrders: otherReservations });
      return locked.save();
    },
  };
}
