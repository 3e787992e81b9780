import { MigrationInterface, QueryRunner } from 'typeorm';
import type { ReleaseAwareMigration } from '../migrator';
import { MIGRATIONS } from './index';

/** The migrations 1.0.0 shipped with: written before the expand/contract rules (docs/development.md), left as is. */
const BEFORE_THE_RULES = 18;

/**
 * The tables the supported releases before (1.0.0, 1.1.0) read with `SELECT *` in prepared statements: a column
 * added to or dropped from one of them makes those statements fail ("cached plan must not change result type",
 * SQLSTATE 0A000) until their connections are recycled. This release selects no `*` from a table (a test holds it),
 * so the list only shrinks as those releases leave support.
 */
const READ_WITH_STAR_BY_RELEASES_BEFORE = ['webhook_events', 'webhook_endpoints'];

/** The statements a migration's `up` sends, without a database: what the rules can be read off. */
async function statementsOf(migration: MigrationInterface): Promise<string[]> {
  const sent: string[] = [];
  const recorder = {
    query: async (sql: string) => {
      sent.push(sql.replace(/\s+/g, ' ').trim());
      return [{ invalid: false, found: false }];
    },
  } as unknown as QueryRunner;
  await migration.up(recorder);
  return sent;
}

describe('migrations after 1.0.0 follow the expand/contract rules', () => {
  const later = MIGRATIONS.slice(BEFORE_THE_RULES).map((Migration) => new Migration() as ReleaseAwareMigration);

  it('counts the migrations 1.0.0 shipped with', () => {
    expect(MIGRATIONS[BEFORE_THE_RULES - 1].name).toBe('OrderIdBlocks1796000700000');
    expect(later.length).toBeGreaterThan(0);
  });

  it.each(later.map((migration) => [migration.name, migration] as const))(
    '%s declares the release it serves from, and builds indexes CONCURRENTLY outside a transaction',
    async (_name, migration) => {
      expect(migration.servesFrom).toMatch(/^\d+\.\d+\.\d+$/);
      const statements = await statementsOf(migration);
      const indexes = statements.filter((sql) => /^CREATE (UNIQUE )?INDEX/i.test(sql));
      for (const sql of indexes) expect(sql).toMatch(/^CREATE (UNIQUE )?INDEX CONCURRENTLY/i);
      if (indexes.length) expect(migration.transaction).toBe(false);
      // No rewrite or scan under ACCESS EXCLUSIVE: SET NOT NULL, a column's type, a constraint checked at once.
      for (const sql of statements) {
        expect(sql).not.toMatch(/SET NOT NULL|ALTER COLUMN \S+ (SET DATA )?TYPE|DROP COLUMN|DROP TABLE/i);
        if (/ADD CONSTRAINT .* (CHECK|FOREIGN KEY)/i.test(sql)) expect(sql).toMatch(/NOT VALID/i);
        // No column added to or dropped from a table the releases before select `*` from (see above).
        for (const table of READ_WITH_STAR_BY_RELEASES_BEFORE) {
          expect(sql).not.toMatch(
            new RegExp(`ALTER TABLE (IF EXISTS )?(ONLY )?${table}\\b.*\\b(ADD|DROP) COLUMN`, 'i'),
          );
        }
      }
    },
  );
});
