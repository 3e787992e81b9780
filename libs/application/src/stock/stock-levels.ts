import { PetStatus } from '@petstore/domain';
import { Page, PageRequest } from '../common/page';

/** A pet's stock as the API shows it (the specification's `InventoryItem` schema): its status is the pet's. */
export interface StockLevel {
  petId: number;
  quantity: number;
  status: PetStatus;
  /** The stock entry's version (its quantity's changes and its pet's status's: Stock.version). */
  version: number;
}

export interface StockLevelFilter {
  /** Any of these pet statuses. */
  statuses?: PetStatus[];
}

/** Reads the stock entries together with their pets' status (a query service, no locks). */
export abstract class StockLevels {
  abstract find(petId: number): Promise<StockLevel | null>;
  /** Keyset page ascending by pet id. */
  abstract list(filter: StockLevelFilter, page: PageRequest): Promise<Page<StockLevel>>;
}
