import { describeAccountRepositoryContract, describeApiKeyRepositoryContract } from '@petstore/application/testing';
import { resetDatabase } from '@petstore/testing';
import { pgRepositories, useTestDatabase } from '../../../test/support/real-database';

describe('PgAccountRepository and PgApiKeyRepository (real database)', () => {
  const db = useTestDatabase();

  // New repositories each test: PgApiKeyRepository's once-a-minute memory of touched keys starts empty.
  const fresh = async () => {
    await resetDatabase(db.dataSource);
    return pgRepositories(db.host);
  };
  describeAccountRepositoryContract('PostgreSQL', fresh);
  describeApiKeyRepositoryContract('PostgreSQL', fresh);
});
