import { describeCategoryRepositoryContract } from '@petstore/application/testing';
import { resetDatabase } from '@petstore/testing';
import { Category } from '@petstore/domain';
import { pgRepositories, useTestDatabase } from '../../../test/support/real-database';
import { PgCategoryRepository } from './pg-category.repository';

describe('PgCategoryRepository (real database)', () => {
  const db = useTestDatabase();

  describeCategoryRepositoryContract('PostgreSQL', async () => {
    await resetDatabase(db.dataSource);
    return pgRepositories(db.host);
  });

  it('lockById holds the row until the transaction ends', async () => {
    await resetDatabase(db.dataSource);
    const categories = new PgCategoryRepository(db.host);
    const id = await categories.nextId();
    await categories.add(Category.create({ id, name: 'Locked' }));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = db.host.transaction(async () => {
      expect((await categories.lockById(id))?.name).toBe('Locked');
      locked();
      await held;
    });
    await isLocked;
    const runner = db.dataSource.createQueryRunner();
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
