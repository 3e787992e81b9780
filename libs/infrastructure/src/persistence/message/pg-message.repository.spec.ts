import { describeMessageRepositoryContract } from '@petstore/application/testing';
import { Account } from '@petstore/domain';
import { resetDatabase, testDatabaseUrl } from '@petstore/testing';
import { DataSource } from 'typeorm';
import { createDataSource } from '../../database/data-source';
import { TransactionHost, TypeOrmUnitOfWork } from '../../database/transaction-host';
import { PgAccountRepository } from '../account/pg-account.repository';
import { PgMessageRepository } from './pg-message.repository';

describe('PgMessageRepository (real database)', () => {
  let dataSource: DataSource;
  let host: TransactionHost;

  beforeAll(async () => {
    dataSource = await createDataSource(await testDatabaseUrl()).initialize();
    host = new TransactionHost(dataSource);
  });
  afterAll(() => dataSource.destroy());

  describeMessageRepositoryContract('TypeORM on PostgreSQL', async () => {
    await resetDatabase(dataSource);
    const accounts = new PgAccountRepository(host);
    return {
      messages: new PgMessageRepository(host),
      uow: new TypeOrmUnitOfWork(host),
      newAccountId: async () => {
        const account = Account.signUp({ id: await accounts.nextId(), name: 'Owner', now: new Date() });
        await accounts.add(account);
        return account.id;
      },
    };
  });
});
