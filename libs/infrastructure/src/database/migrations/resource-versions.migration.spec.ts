import { randomUUID } from 'node:crypto';
import { QueryRunner } from 'typeorm';
import { TestDatabase, useTestDatabase } from '../../../test/support/real-database';
import { ResourceVersions1796000960000, VERSIONED_TABLES } from './1796000960000-resource-versions';

/** A row's version, read with plain SQL. */
type Versions = Record<string, number>;

/**
 * ResourceVersions on a database written as the previous release (1.0.0) writes it, with plain SQL that names no
 * `version`: the column comes without rewriting a table, every existing row is version 1, and the triggers advance
 * the version of every change of what the API shows, whoever writes it.
 */
describe('migration ResourceVersions1796000960000 (real PostgreSQL)', () => {
  const db = useTestDatabase({ reset: true });
  // Its own hooks run inside the database's: the last one leaves the database migrated for the next spec.
  describe('on a store the previous release wrote', () => storeOfThePreviousRelease(db));
});

function storeOfThePreviousRelease(db: TestDatabase): void {
  const migration = new ResourceVersions1796000960000();
  let q: QueryRunner;
  const ids = { category: 0, pet: 0, order: 0, message: '' };

  /** The tables' files: a rewrite gives a table a new one. */
  const files = async (): Promise<Record<string, number>> => {
    const rows: Array<{ relname: string; file: number }> = await q.query(
      `SELECT relname, relfilenode::int AS file FROM pg_class WHERE relname = ANY ($1) AND relkind = 'r'`,
      [VERSIONED_TABLES.map(({ table }) => table)],
    );
    return Object.fromEntries(rows.map((row) => [row.relname, row.file]));
  };

  const versions = async (): Promise<Versions> => {
    const [row]: Versions[] = await q.query(
      `SELECT (SELECT version FROM categories WHERE id = $1)::int AS category,
              (SELECT version FROM pets WHERE id = $2)::int AS pet,
              (SELECT version FROM stock WHERE pet_id = $2)::int AS stock,
              (SELECT version FROM orders WHERE id = $3)::int AS "order",
              (SELECT version FROM messages WHERE id = $4)::int AS message`,
      [ids.category, ids.pet, ids.order, ids.message],
    );
    return row;
  };

  beforeAll(async () => {
    q = db.dataSource.createQueryRunner();
    await migration.down(q);
    // A store as the previous release left it, every statement naming its columns (none of them `version`).
    const [account] = await q.query(`INSERT INTO accounts (name, role) VALUES ('Ada', 'customer') RETURNING id`);
    [{ id: ids.category }] = await q.query(
      `INSERT INTO categories (name, description, name_key) VALUES ('Dogs', NULL, 'dogs') RETURNING id`,
    );
    [{ id: ids.pet }] = await q.query(
      `INSERT INTO pets (name, category_id, status) VALUES ('Rex', $1, 'available') RETURNING id`,
      [ids.category],
    );
    await q.query(`INSERT INTO stock (pet_id, quantity) VALUES ($1, 3)`, [ids.pet]);
    [{ id: ids.order }] = await q.query(
      `INSERT INTO orders (pet_id, owner_id, quantity, status, complete, status_changed_at)
       VALUES ($1, $2, 1, 'placed', false, now()) RETURNING id`,
      [ids.pet, account.id],
    );
    ids.message = randomUUID();
    await q.query(
      `INSERT INTO messages (id, owner_id, body, status, created_at, next_attempt_at)
       VALUES ($1, $2, 'Hello', 'queued', now(), now())`,
      [ids.message, account.id],
    );
  });
  afterAll(async () => {
    // The database stays migrated for the next spec of this worker.
    await migration.up(q);
    await q.release();
  });

  it('adds the column without rewriting a table; every row is version 1; running again changes nothing', async () => {
    const before = await files();
    expect(Object.keys(before).sort()).toEqual(['categories', 'messages', 'orders', 'pets', 'stock']);
    await migration.up(q);
    // The same files (no rewrite), and the value kept in the catalogue (no row written): a catalogue change.
    expect(await files()).toEqual(before);
    const missing: Array<{ relname: string }> = await q.query(
      `SELECT c.relname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
        WHERE a.attname = 'version' AND a.atthasmissing AND c.relname = ANY ($1) ORDER BY c.relname`,
      [Object.keys(before)],
    );
    expect(missing.map((row) => row.relname)).toEqual(['categories', 'messages', 'orders', 'pets', 'stock']);
    expect(await versions()).toEqual({ category: 1, pet: 1, stock: 1, order: 1, message: 1 });
    await q.query(`UPDATE pets SET name = 'Rex II' WHERE id = $1`, [ids.pet]);
    await migration.up(q); // a retry: the column, its value and the triggers as they were
    expect(await versions()).toMatchObject({ pet: 2 });
    const triggers: Array<{ tgname: string }> = await q.query(
      `SELECT tgname FROM pg_trigger WHERE tgname LIKE '%version%' AND NOT tgisinternal ORDER BY tgname`,
    );
    expect(triggers.map((row) => row.tgname)).toEqual([
      'categories_version',
      'messages_version',
      'orders_version',
      'pets_status_versions_stock',
      'pets_version',
      'stock_version',
    ]);
  });

  it('advances a version with every change a writer that knows nothing of it makes, and only then', async () => {
    const start = await versions();
    const expectAdvanced = async (by: Partial<Versions>) => {
      const now = await versions();
      const expected = { ...start };
      for (const [key, n] of Object.entries(by)) expected[key] = (start[key] ?? 0) + (n ?? 0);
      expect(now).toEqual(expected);
    };
    // The same values: nothing the API shows changed.
    await q.query(`UPDATE pets SET name = name, status = status WHERE id = $1`, [ids.pet]);
    await q.query(`UPDATE stock SET quantity = quantity WHERE pet_id = $1`, [ids.pet]);
    await expectAdvanced({});
    // A name is the pet's alone; a status is the pet's and its stock entry's (InventoryItem shows it).
    await q.query(`UPDATE pets SET name = 'Max' WHERE id = $1`, [ids.pet]);
    await expectAdvanced({ pet: 1 });
    await q.query(`UPDATE pets SET status = 'pending' WHERE id = $1`, [ids.pet]);
    await expectAdvanced({ pet: 2, stock: 1 });
    await q.query(`UPDATE stock SET quantity = 7 WHERE pet_id = $1`, [ids.pet]);
    await expectAdvanced({ pet: 2, stock: 2 });
    // A category renamed (its key with it), described.
    await q.query(`UPDATE categories SET name = 'Hounds', name_key = 'hounds' WHERE id = $1`, [ids.category]);
    await q.query(`UPDATE categories SET description = 'Loyal' WHERE id = $1`, [ids.category]);
    await expectAdvanced({ pet: 2, stock: 2, category: 2 });
    // An order completed; a message's failed attempt (not shown) and then its delivery.
    await q.query(`UPDATE orders SET status = 'completed', complete = true, status_changed_at = now() WHERE id = $1`, [
      ids.order,
    ]);
    await q.query(`UPDATE messages SET attempts = attempts + 1, last_error = 'down' WHERE id = $1`, [ids.message]);
    await expectAdvanced({ pet: 2, stock: 2, category: 2, order: 1 });
    await q.query(`UPDATE messages SET status = 'delivered', delivered_at = now() WHERE id = $1`, [ids.message]);
    await expectAdvanced({ pet: 2, stock: 2, category: 2, order: 1, message: 1 });
    // A writer that sets the version itself does not set it: the trigger counts the change.
    await q.query(`UPDATE pets SET name = 'Rex', version = 1 WHERE id = $1`, [ids.pet]);
    await expectAdvanced({ pet: 3, stock: 2, category: 2, order: 1, message: 1 });
    // The pet deleted: its completed order loses its pet (ON DELETE SET NULL), which it shows.
    await q.query(`DELETE FROM pets WHERE id = $1`, [ids.pet]);
    const [order] = await q.query(`SELECT pet_id, version::int AS version FROM orders WHERE id = $1`, [ids.order]);
    expect(order).toEqual({ pet_id: null, version: (start['order'] ?? 0) + 2 });
  });
}
