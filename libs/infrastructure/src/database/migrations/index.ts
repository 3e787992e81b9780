import { Initial1763769600000 } from './1763769600000-initial';

/** Every migration, oldest first. A new migration is appended here. */
export const MIGRATIONS = [Initial1763769600000];
