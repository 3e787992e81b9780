import { describeMessageRepositoryContract } from '@petstore/application/testing';
import { resetDatabase } from '@petstore/testing';
import { newAccountId, pgRepositories, useTestDatabase } from '../../../test/support/real-database';

describe('PgMessageRepository (real database)', () => {
  const db = useTestDatabase();

  describeMessageRepositoryContract('PostgreSQL', async () => {
    await resetDatabase(db.dataSource);
    const { accounts, messages, uow } = pgRepositories(db.host);
    return { messages, uow, newAccountId: () => newAccountId(accounts) };
  });
});
