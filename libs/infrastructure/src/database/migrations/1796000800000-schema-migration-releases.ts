import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * For each migration, the oldest release that runs correctly on the schema after it (`serves_from`), written by
 * the migrator of the release that knows it (migrator.ts). A release started on a database holding migrations it
 * does not know looks them up here, and refuses to start unless every one is served by its version or older:
 * rolling back onto a schema the old code misreads is refused with one line instead of corrupting data.
 *
 * Expand only: a new table, which the previous release (1.0.0) never reads.
 */
export class SchemaMigrationReleases1796000800000 implements MigrationInterface {
  name = 'SchemaMigrationReleases1796000800000';
  readonly servesFrom = '1.0.0';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE IF NOT EXISTS schema_migration_releases (
         name text PRIMARY KEY,
         serves_from text NOT NULL CHECK (serves_from ~ '^[0-9]+\\.[0-9]+\\.[0-9]+'),
         recorded_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS schema_migration_releases`);
  }
}
