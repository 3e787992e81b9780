import { Stock } from '@petstore/domain';

/**
 * The stock entries, one per pet (created with the pet, deleted with it). Lock the pet before
 * its entry when a command needs both (see PetRepository).
 */
export abstract class StockRepository {
  /** Inserts the entry of a pet that has none yet (`Stock.forNewPet`). */
  abstract create(item: Stock): Promise<Stock>;
  /**
   * Reads the entry and locks its row until the transaction ends (`SELECT … FOR UPDATE`).
   * Inside `UnitOfWork.run` only.
   */
  abstract lockByPetId(petId: number): Promise<Stock | null>;
  /** Writes the quantity of an existing entry. */
  abstract save(item: Stock): Promise<Stock>;
}
