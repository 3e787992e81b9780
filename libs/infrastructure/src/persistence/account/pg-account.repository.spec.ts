import { describeAccountRepositoryContract } from '@petstore/application/testing';
import { resetDatabase } from '@petstore/testing';
import { pgRepositories, useTestDatabase } from '../../../test/support/real-database';

describe('PgAccountRepository and PgApiKeyRepository (real database)', () => {
  const db = useTestDatabase();

  describeAccountRepositoryContract('PostgreSQL', async () => {
    await resetDatabase(db.dataSource);
    // New repositories each test: PgApiKeyRepository's once-a-minute memory of touched keys starts empty.
    return pgRepositories(db.host);
  });
});
