import { describeIdempotencyStoreContract } from '@petstore/application/testing';
import { resetDatabase } from '@petstore/testing';
import { pgRepositories, useTestDatabase } from '../../../test/support/real-database';

describe('PgIdempotencyStore (real database)', () => {
  const db = useTestDatabase();

  describeIdempotencyStoreContract('PostgreSQL', async () => {
    await resetDatabase(db.dataSource);
    return pgRepositories(db.host);
  });
});
