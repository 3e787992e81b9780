import { InventoryItem } from '@petstore/domain';

/**
 * The stock entries, one per pet (created with the pet, deleted with it). Lock the pet before
 * its entry when a command needs both (see PetRepository).
 */
export abstract class InventoryRepository {
  /** Inserts the entry of a pet that has none yet (`InventoryItem.forNewPet`). */
  abstract create(item: InventoryItem): Promise<InventoryItem>;
  /**
   * Reads the entry and locks its row until the transaction ends (`SELECT … FOR UPDATE`).
   * Inside `UnitOfWork.run` only.
   */
  abstract lockByPetId(petId: number): Promise<InventoryItem | null>;
  /** Writes the quantity of an existing entry. */
  abstract save(item: InventoryItem): Promise<InventoryItem>;
}
