import { Initial1763769600000 } from './1763769600000-initial';
import { IdempotencyKeys1763770000000 } from './1763770000000-idempotency-keys';
import { PetsAndInventory1763856000000 } from './1763856000000-pets-and-inventory';

/** Every migration, oldest first. A new migration is appended here. */
export const MIGRATIONS = [Initial1763769600000, IdempotencyKeys1763770000000, PetsAndInventory1763856000000];
