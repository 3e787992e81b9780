import { describeAccountRepositoryContract } from '@petstore/application/testing';
import { resetDatabase, testDatabaseUrl } from '@petstore/testing';
import { DataSource } from 'typeorm';
import { createDataSource } from '../../database/data-source';
import { TransactionHost, TypeOrmUnitOfWork } from '../../database/transaction-host';
import { PgAccountRepository, PgApiKeyRepository } from './pg-account.repository';

describe('PgAccountRepository and PgApiKeyRepository (real database)', () => {
  let dataSource: DataSource;
  let host: TransactionHost;

  beforeAll(async () => {
    dataSource = await createDataSource(await testDatabaseUrl()).initialize();
    host = new TransactionHost(dataSource);
  });
  afterAll(() => dataSource.destroy());

  describeAccountRepositoryContract('TypeORM on PostgreSQL', async () => {
    await resetDatabase(dataSource);
    return {
      accounts: new PgAccountRepository(host),
      // A new repository each test: its once-a-minute memory of touched keys starts empty.
      apiKeys: new PgApiKeyRepository(host),
      uow: new TypeOrmUnitOfWork(host),
    };
  });
});
