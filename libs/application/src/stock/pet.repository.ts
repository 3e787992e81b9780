import { Pet, PetStatus } from '@petstore/domain';
import { Page, PageRequest } from '../common/page';

/** The filters of the pet list; every one given must hold (AND). */
export interface PetFilter {
  /** Any of these statuses. */
  statuses?: PetStatus[];
  categoryId?: number;
  /** A case-insensitive substring of the name, taken literally (`%` and `_` are not wildcards). */
  nameContains?: string;
  /** One of these ids (an empty list matches no pet). */
  ids?: number[];
}

/**
 * Pets. Lock order, for every command that locks more than one row: the pet first, then its
 * stock entry (both at once: `StockRepository.lockWithPet`), so that two commands never wait on each other.
 */
export abstract class PetRepository {
  abstract findById(id: number): Promise<Pet | null>;
  /**
   * Reads the pet and locks its row until the transaction ends (`SELECT … FOR UPDATE`).
   * Inside `UnitOfWork.run` only.
   */
  abstract lockById(id: number): Promise<Pet | null>;
  /** A page of the pets that pass `filter`, ascending by id (keyset). */
  abstract list(filter: PetFilter, page: PageRequest): Promise<Page<Pet>>;
  /** A new pet's id, taken from the table's sequence before the pet is created (never reused). */
  abstract nextId(): Promise<number>;
  /** Stores a new pet; throws UnknownCategoryError when its category does not exist. */
  abstract add(pet: Pet): Promise<void>;
  /** Writes a stored pet's changes; throws UnknownCategoryError when its category does not exist. */
  abstract save(pet: Pet): Promise<void>;
  /** Deletes the pet and, with it, its stock entry. Returns false if it did not exist. */
  abstract delete(id: number): Promise<boolean>;
}
