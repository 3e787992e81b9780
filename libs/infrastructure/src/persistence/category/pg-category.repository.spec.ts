import { describeCategoryRepositoryContract } from '@petstore/application/testing';
import { resetDatabase, testDatabaseUrl } from '@petstore/testing';
import { DataSource } from 'typeorm';
import { createDataSource } from '../../database/data-source';
import { TransactionHost, TypeOrmUnitOfWork } from '../../database/transaction-host';
import { PgStockRepository } from '../stock/pg-stock.repository';
import { PgPetRepository } from '../pet/pg-pet.repository';
import { PgCategoryRepository } from './pg-category.repository';

describe('PgCategoryRepository (real database)', () => {
  let url: string;
  let dataSource: DataSource;
  let host: TransactionHost;

  beforeAll(async () => {
    url = await testDatabaseUrl();
    dataSource = await createDataSource(url).initialize();
    host = new TransactionHost(dataSource);
  });
  afterAll(() => dataSource.destroy());

  describeCategoryRepositoryContract('TypeORM on PostgreSQL', async () => {
    await resetDatabase(dataSource);
    return {
      categories: new PgCategoryRepository(host),
      pets: new PgPetRepository(host),
      stocks: new PgStockRepository(host),
      uow: new TypeOrmUnitOfWork(host),
    };
  });
});
