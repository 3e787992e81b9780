/** Every TypeORM entity; each slice appends its own. */
export const ENTITIES: Function[] = [];
