import { DomainError, NotFoundError } from '../common/domain-error';
import type { PetStatus } from './pet-status';

export class PetNotFoundError extends NotFoundError {
  constructor(id: number) {
    super('Pet', id);
  }
}

/** A command names a pet that does not exist (422, unlike a missing path id). */
export class UnknownPetError extends DomainError {
  readonly kind = 'unknown_pet' as const;
  constructor(id: number) {
    super(`Pet ${id} does not exist.`);
  }
}

/** Orders are placed only for `available` pets (invariant I2). */
export class PetNotAvailableError extends DomainError {
  readonly kind = 'pet_not_available' as const;
  constructor(
    readonly petId: number,
    readonly status: PetStatus,
  ) {
    super(`Pet ${petId} is ${status}; only available pets can be ordered.`);
  }
}

/** A status change the transition rules refuse (docs/domain.md, "Status changes by hand"). */
export class InvalidStatusTransitionError extends DomainError {
  readonly kind = 'invalid_status_transition' as const;
  constructor(
    readonly from: PetStatus,
    readonly to: PetStatus,
    readonly reason: string,
  ) {
    super(`Cannot change the pet's status from ${from} to ${to}: ${reason}.`);
  }
}

/** A pet with open orders cannot be deleted (invariant I6). */
export class PetHasOpenOrdersError extends DomainError {
  readonly kind = 'pet_has_open_orders' as const;
  constructor(
    readonly petId: number,
    readonly openOrders: number,
  ) {
    super(
      `Pet ${petId} has ${openOrders} open order${openOrders === 1 ? '' : 's'}; ` +
        `complete or cancel ${openOrders === 1 ? 'it' : 'them'} first.`,
    );
  }
}
