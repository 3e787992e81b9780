import { Initial1763769600000 } from './1763769600000-initial';
import { IdempotencyKeys1763770000000 } from './1763770000000-idempotency-keys';

/** Every migration, oldest first. A new migration is appended here. */
export const MIGRATIONS = [Initial1763769600000, IdempotencyKeys1763770000000];
