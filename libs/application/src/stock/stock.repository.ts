import { Pet, Stock } from '@petstore/domain';

/**
 * The stock entries, one per pet (created with the pet, deleted with it). Lock the pet before
 * its entry when a command needs both (see PetRepository).
 */
export abstract class StockRepository {
  /** Inserts the entry of a pet that has none yet (`Stock.forNewPet`). */
  abstract create(item: Stock): Promise<Stock>;
  /**
   * Reads the pet and its entry and locks both rows until the transaction ends, the pet's first (the order
   * every command locks in), in one round trip (`SELECT … FOR UPDATE OF pets, stock`): every stock command
   * starts here. Null when the pet does not exist (or, which never happens, has no entry).
   * Inside `UnitOfWork.run` only.
   */
  abstract lockWithPet(petId: number): Promise<{ pet: Pet; stock: Stock } | null>;
  /** Writes the quantity of an existing entry. */
  abstract save(item: Stock): Promise<Stock>;
}
