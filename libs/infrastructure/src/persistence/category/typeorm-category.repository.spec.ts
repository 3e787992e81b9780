import { describeCategoryRepositoryContract } from '@petstore/application/testing';
import { resetDatabase, testDatabaseUrl } from '@petstore/testing';
import { DataSource } from 'typeorm';
import { createDataSource } from '../../database/data-source';
import { TransactionHost, TypeOrmUnitOfWork } from '../../database/transaction-host';
import { TypeOrmStockRepository } from '../stock/typeorm-stock.repository';
import { TypeOrmPetRepository } from '../pet/typeorm-pet.repository';
import { TypeOrmCategoryRepository } from './typeorm-category.repository';

describe('TypeOrmCategoryRepository (real database)', () => {
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
      categories: new TypeOrmCategoryRepository(host),
      pets: new TypeOrmPetRepository(host),
      stocks: new TypeOrmStockRepository(host),
      uow: new TypeOrmUnitOfWork(host),
    };
  });
});
