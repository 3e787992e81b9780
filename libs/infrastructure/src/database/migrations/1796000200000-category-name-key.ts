import { nameKey } from '@petstore/domain';
import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Category names are unique by their key (`nameKey`: Unicode NFKC, then case folding), no longer by `lower(name)`:
 * `ＤＯＧＳ` and `Dogs` are one name. The key is computed by the application, in one place (the domain's
 * `nameKey`), and stored in `name_key` beside the name, under a unique index that decides races.
 *
 * Existing rows get their key here, in one statement. If two of them have the same key (they could be stored
 * while `lower(name)` told them apart, e.g. `Dogs` and `ＤＯＧＳ`), the migrator's precheck stops the release before
 * any of its migrations commits, and its error names each such group by id and name: rename all but one of each
 * (`PATCH /categories/{id}` on the running version), then start the new version again. Names stored earlier that
 * the new rules refuse (control characters, mixed scripts) stay as they are; only a rename checks them.
 */
export class CategoryNameKey1796000200000 implements MigrationInterface {
  name = 'CategoryNameKey1796000200000';

  /**
   * Run by the migrator before any pending migration commits: colliding names stop the release, changing nothing.
   * On a new database the earlier pending migrations have not made the table yet: nothing to check.
   */
  async precheck(q: QueryRunner): Promise<string[]> {
    const [{ found }] = await q.query(`SELECT to_regclass('categories') IS NOT NULL AS found`);
    if (!found) return [];
    return collisions(await q.query(`SELECT id, name FROM categories ORDER BY id`));
  }

  async up(q: QueryRunner): Promise<void> {
    const rows: Array<{ id: string; name: string }> = await q.query(`SELECT id, name FROM categories ORDER BY id`);
    // Again here, in the migration's transaction: a name written since the precheck.
    const problems = collisions(rows);
    if (problems.length) throw new Error(`${problems.join('; ')} (this migration was rolled back)`);
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

/** Groups of categories whose names share a key, as one problem each (ids and names), or none. */
function collisions(rows: Array<{ id: string; name: string }>): string[] {
  const byKey = new Map<string, Array<{ id: string; name: string }>>();
  for (const row of rows) byKey.set(nameKey(row.name), [...(byKey.get(nameKey(row.name)) ?? []), row]);
  return [...byKey.values()]
    .filter((group) => group.length > 1)
    .map(
      (group) =>
        'categories whose names are the same after NFKC normalisation and case folding: ' +
        `${group.map((row) => `${row.id} ${JSON.stringify(row.name)}`).join(', ')}; rename all but one, then migrate`,
    );
}
