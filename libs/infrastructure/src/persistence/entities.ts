import { AccountOrmEntity, ApiKeyOrmEntity } from './account/account.orm-entity';
import { CategoryOrmEntity } from './category/category.orm-entity';

/** Every TypeORM entity; each slice appends its own. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export const ENTITIES: Function[] = [AccountOrmEntity, ApiKeyOrmEntity, CategoryOrmEntity];
