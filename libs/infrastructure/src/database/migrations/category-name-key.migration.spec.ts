import type { DataSource } from 'typeorm';
import { useTestDatabase } from '../../../test/support/real-database';
import { CategoryNameKey1796000200000 } from './1796000200000-category-name-key';

describe('migration CategoryNameKey1796000200000 (real PostgreSQL)', () => {
  const db = useTestDatabase({ reset: true });
  const migration = new CategoryNameKey1796000200000();

  /** Back to the lower(name) index with `names` stored, then `run`; all rolled back (PostgreSQL's DDL is). */
  async function fromOldSchema(
    names: string[],
    run: (q: ReturnType<DataSource['createQueryRunner']>) => Promise<void>,
  ) {
    const q = db.dataSource.createQueryRunner();
    await q.startTransaction();
    try {
      await migration.down(q);
      for (const name of names) await q.query(`INSERT INTO categories (name) VALUES ($1)`, [name]);
      await run(q);
    } finally {
      await q.rollbackTransaction();
      await q.release();
    }
  }

  it('gives existing rows their key, and the unique index then refuses a look-alike', async () => {
    await fromOldSchema(['Dogs', 'Straße', 'Cats'], async (q) => {
      await migration.up(q);
      const rows = await q.query(`SELECT name, name_key FROM categories ORDER BY id`);
      expect(rows).toEqual([
        { name: 'Dogs', name_key: 'dogs' },
        { name: 'Straße', name_key: 'strasse' },
        { name: 'Cats', name_key: 'cats' },
      ]);
      await expect(
        q.query(`INSERT INTO categories (name, name_key) VALUES ('\uFF24\uFF2F\uFF27\uFF33', 'dogs')`),
      ).rejects.toThrow(/categories_name_key_uq/);
    });
  });

  it('stops, naming the colliding rows, when stored names are the same after normalisation', async () => {
    await fromOldSchema(['Dogs', '\uFF24\uFF2F\uFF27\uFF33', 'Cats'], async (q) => {
      const ids = (await q.query(`SELECT id FROM categories ORDER BY id`)).map((row: { id: string }) => row.id);
      const problem =
        `categories whose names are the same after NFKC normalisation and case folding: ` +
        `${ids[0]} "Dogs", ${ids[1]} "\uFF24\uFF2F\uFF27\uFF33"; rename all but one, then migrate`;
      // The migrator asks first, before any pending migration runs; the migration itself checks again.
      await expect(migration.precheck(q)).resolves.toEqual([problem]);
      await expect(migration.up(q)).rejects.toThrow(problem);
    });
  });

  it('finds nothing to refuse when the names differ', async () => {
    await fromOldSchema(['Dogs', 'Cats'], async (q) => {
      await expect(migration.precheck(q)).resolves.toEqual([]);
    });
  });
});
