import { InvalidValueError } from '../common/domain-error';
import { newId } from '../common/identity';
import { LIMITS } from '../common/limits';
import { FIRST_VERSION } from '../common/version';
import { displayName } from '../common/text';
import { InvalidStatusTransitionError, PetHasOpenOrdersError, PetNotAvailableError } from './pet.errors';
import { isPetStatus, PET_STATUSES, PetStatus } from './pet-status';

export interface PetProps {
  id: number;
  name: string;
  categoryId: number;
  status: PetStatus;
  /** When it was added to the catalogue. */
  createdAt: Date;
  /** FIRST_VERSION when created; one more for each stored change of its name, category or status. */
  version: number;
}

/** What a status change must know of the pet's stock; the pet itself holds neither. */
export interface StockFacts {
  /** Units in the pet's stock now. */
  quantity: number;
  /** Open (incomplete) orders for the pet. */
  openOrders: number;
}

/**
 * A listing in the catalogue: one named animal, or a batch once its stock is raised.
 *
 * Its status moves only through `hold`, `makeAvailable` and `markSold`, each guarded by
 * the rule of the hand-change table (docs/domain.md) that it stands for; `changeStatus`
 * is that table. The rules that also move stock (ordering, restocking) live in `StockRules`,
 * which calls these methods; every transition those rules cause is one the table allows.
 */
export class Pet {
  private constructor(private readonly props: PetProps) {}

  /** A new pet, with the id `PetRepository.nextId()` gave. Without a status it is `available`. */
  /** A new pet, added at `now`. */
  static create(input: { id: number; name: string; categoryId: number; status?: PetStatus; now: Date }): Pet {
    const createdAt = new Date(input.now.getTime());
    return new Pet({ id: newId(input.id), ...Pet.validate(input), createdAt, version: FIRST_VERSION });
  }

  /** A new pet's fields, checked (InvalidValueError): a use case checks them before it takes an id. */
  static validate(input: {
    name: string;
    categoryId: number;
    status?: PetStatus;
  }): Omit<PetProps, 'id' | 'createdAt' | 'version'> {
    return {
      name: Pet.checkName(input.name),
      categoryId: Pet.checkCategoryId(input.categoryId),
      status: Pet.checkStatus(input.status ?? 'available'),
    };
  }

  static restore(props: PetProps): Pet {
    return new Pet({ ...props });
  }

  get id(): number {
    return this.props.id;
  }
  get name(): string {
    return this.props.name;
  }
  get categoryId(): number {
    return this.props.categoryId;
  }
  get createdAt(): Date {
    return this.props.createdAt;
  }
  get status(): PetStatus {
    return this.props.status;
  }
  get version(): number {
    return this.props.version;
  }
  get isAvailable(): boolean {
    return this.props.status === 'available';
  }
  get isPending(): boolean {
    return this.props.status === 'pending';
  }
  get isSold(): boolean {
    return this.props.status === 'sold';
  }

  /** A change of the pet is stored: its version goes one up, as the database counts it (FIRST_VERSION). */
  advanceVersion(): void {
    this.props.version += 1;
  }

  rename(name: string): void {
    this.props.name = Pet.checkName(name);
  }

  /** The caller checks that the category exists (`UnknownCategoryError`). */
  moveToCategory(categoryId: number): void {
    this.props.categoryId = Pet.checkCategoryId(categoryId);
  }

  /** Orders are placed only for available pets (I2). */
  assertOrderable(): void {
    if (!this.isAvailable) throw new PetNotAvailableError(this.props.id, this.props.status);
  }

  /** A pet with open orders cannot be deleted (I6). */
  assertDeletable(openOrderCount: number): void {
    if (openOrderCount > 0) throw new PetHasOpenOrdersError(this.props.id, openOrderCount);
  }

  /**
   * Change the status by hand (administrators): the hand-change table of docs/domain.md.
   * Asking for the status the pet already has is a no-op, not a refusal: it changes nothing,
   * breaks no invariant, and makes the request safe to repeat.
   * `→ sold` also empties the stock; that is the caller's part (`StockRules.changeStatusByHand`).
   */
  changeStatus(to: PetStatus, stock: StockFacts): void {
    switch (Pet.checkStatus(to)) {
      case 'available':
        return this.makeAvailable(stock.quantity);
      case 'pending':
        return this.hold();
      case 'sold':
        return this.markSold(stock.openOrders);
    }
  }

  /** → pending: a hold, or the last unit went into an order. A sold pet cannot be held. */
  hold(): void {
    if (this.isPending) return;
    if (this.isSold) {
      throw new InvalidStatusTransitionError(
        'sold',
        'pending',
        'a sold pet cannot be put on hold; set its stock above 0 to sell it again',
      );
    }
    this.props.status = 'pending';
  }

  /** → available: only with units in stock (`quantity` after the command). */
  makeAvailable(quantity: number): void {
    if (this.isAvailable) return;
    if (quantity <= 0) {
      throw new InvalidStatusTransitionError(
        this.props.status,
        'available',
        'it has no units in stock; set its stock above 0, which makes it available',
      );
    }
    this.props.status = 'available';
  }

  /**
   * → sold: only when no open order remains (I3). The stock is 0 when this is called:
   * either it already was (an order took the last unit) or the command empties it.
   */
  markSold(openOrders: number): void {
    if (this.isSold) return;
    if (openOrders > 0) {
      throw new InvalidStatusTransitionError(
        this.props.status,
        'sold',
        `it still has ${openOrders} open order${openOrders === 1 ? '' : 's'}; ` +
          `complete or cancel ${openOrders === 1 ? 'it' : 'them'} first`,
      );
    }
    this.props.status = 'sold';
  }

  toSnapshot(): PetProps {
    return { ...this.props };
  }

  private static checkName(name: string): string {
    return displayName('name', name, LIMITS.petName.min, LIMITS.petName.max);
  }

  private static checkCategoryId(categoryId: number): number {
    if (!Number.isSafeInteger(categoryId) || categoryId < 1) {
      throw new InvalidValueError('categoryId', 'categoryId must be a positive integer.');
    }
    return categoryId;
  }

  private static checkStatus(status: unknown): PetStatus {
    if (!isPetStatus(status)) {
      throw new InvalidValueError('status', `status must be one of: ${PET_STATUSES.join(', ')}.`);
    }
    return status;
  }
}
