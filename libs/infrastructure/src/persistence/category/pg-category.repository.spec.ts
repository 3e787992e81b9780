import { describeCategoryRepositoryContract } from '@petstore/application/testing';
import { resetDatabase, testDatabaseUrl } from '@petstore/testing';
import { Category } from '@petstore/domain';
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

  it('lockById holds the row until the transaction ends', async () => {
    await resetDatabase(dataSource);
    const categories = new PgCategoryRepository(host);
    const id = await categories.nextId();
    await categories.add(Category.create({ id, name: 'Locked' }));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = host.transaction(async () => {
      expect((await categories.lockById(id))?.name).toBe('Locked');
      locked();
      await held;
    });
    await isLocked;
    const runner = dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      await runner.query(`SET LOCAL lock_timeout = '200ms'`);
      await expect(runner.query(`SELECT 1 FROM categories WHERE id = $1 FOR UPDATE`, [id])).rejects.toThrow(
        /lock timeout/i,
      );
      await runner.rollbackTransaction();
      release();
      await holder;
      await runner.startTransaction();
      await expect(
        runner.query(`SELECT 1 FROM categories WHERE id = $1 FOR UPDATE NOWAIT`, [id]),
      ).resolves.toHaveLength(1);
      await runner.rollbackTransaction();
    } finally {
      release();
      await runner.release();
    }
  });
});
