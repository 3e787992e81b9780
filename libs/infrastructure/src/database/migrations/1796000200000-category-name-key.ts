import { nameKey } from '@petstore/domain';
import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Category names are unique by their key (`nameKey`: Unicode NFKC, then case folding), no longer by `lower(name)`:
 * `ＤＯＧＳ` and `Dogs` are one name. The key is computed by the application, in one place (the domain's
 * `nameKey`), and stored in `name_key` beside the name, under a unique index that decides races.
 *
 * Existing rows get their key here, in one statement. If two of them have the same key (they could be stored
 * while `lower(name)` told them apart, e.g. `Dogs` and `ＤＯＧＳ`), the migration stops before changing anything
 * (it runs in its transaction) and its error names each such group by id and name: rename all but one of each
 * (`PATCH /categories/{id}` on the running version), then start the new version again. Names stored earlier that
 * the new rules refuse (control characters, mixed scripts) stay as they are; only a rename checks them.
 */
export class CategoryNameKey1796000200000 implements MigrationInterface {
  name = 'CategoryNameKey1796000200000';

  async up(q: QueryRunner): Promise<void> {
    const rows: Array<{ id: string; name: string }> = await q.query(`SELECT id, name FROM categories ORDER BY id`);
    const byKey = new Map<string, Array<{ id: string; name: string }>>();
    for (const row of rows) byKey.set(nameKey(row.name), [...(byKey.get(nameKey(row.name)) ?? []), row]);
    const collisions = [...byKey.values()].filter((group) => group.length > 1);
    if (collisions.length) {
      const groups = collisions.map((group) => group.map((row) => `${row.id} ${JSON.stringify(row.name)}`).join(', '));
      throw new Error(
        'Categories whose names are the same after NFKC normalisation and case folding: ' +
          `${groups.join('; ')}. Rename all but one of each group, then migrate again (nothing was changed).`,
      );
    }
    await q.query(`ALTER TABLE categories ADD COLUMN name_key text`);
    await q.query(
      `UPDATE categories SET name_key = k.key FROM unnest($1::bigint[], $2::text[]) AS k(id, key)
        WHERE categories.id = k.id`,
      [rows.map((row) => row.id), rows.map((row) => nameKey(row.name))],
    );
    await q.query(`ALTER TABLE categories ALTER COLUMN name_key SET NOT NULL`);
    await q.query(`DROP INDEX categories_name_lower_uq`);
    await q.query(`CREATE UNIQUE INDEX categories_name_key_uq ON categories (name_key)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX categories_name_key_uq`);
    await q.query(`ALTER TABLE categories DROP COLUMN name_key`);
    await q.query(`CREATE UNIQUE INDEX categories_name_lower_uq ON categories (lower(name))`);
  }
}
