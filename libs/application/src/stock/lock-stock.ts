import { InventoryItem } from '@petstore/domain';
import { InventoryRepository } from '../inventory/inventory.repository';

/**
 * The inventory entry of a pet whose row the caller has just locked, locked in turn (lock order:
 * pet, inventory entry, order). Every pet has one, created with it: a missing one is a bug.
 */
export async function lockStock(inventory: InventoryRepository, petId: number): Promise<InventoryItem> {
  const stock = await inventory.lockByPetId(petId);
  if (!stock) throw new Error(`Pet ${petId} has no inventory entry.`);
  return stock;
}
