import { describeStockContract } from '@petstore/application/testing';
import { resetDatabase } from '@petstore/testing';
import { pgRepositories, useTestDatabase } from '../../../test/support/real-database';

describe('PgStockRepository and PgStockLevels (real database)', () => {
  const db = useTestDatabase();

  describeStockContract('PostgreSQL', async () => {
    await resetDatabase(db.dataSource);
    return pgRepositories(db.host);
  });
});
