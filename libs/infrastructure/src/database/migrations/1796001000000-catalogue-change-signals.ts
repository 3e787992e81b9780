import { MigrationInterface, QueryRunner } from 'typeorm';

/** The channel every catalogue change is announced on (PgCatalogueChanges listens to it). */
export const CATALOGUE_CHANGES_CHANNEL = 'petstore_catalogue_changes';

/** The tables whose triggers announce their changes; stock is announced by the service after commit (below). */
const ANNOUNCED_TABLES = ['categories', 'pets'] as const;

/**
 * Catalogue change signals (issue 52): a statement-level trigger on `categories` and `pets` sends
 * `pg_notify('petstore_catalogue_changes', <table>)`, so every instance's catalogue cache drops what it holds of the
 * table when the writing transaction commits (PostgreSQL delivers at commit, not at all on rollback), whoever wrote
 * it: this release, the previous one (which knows nothing of the cache) or plain SQL. Statement-level: a bulk change
 * is one notice, and PostgreSQL folds the same payload on the same channel into one per transaction anyway.
 *
 * Not on `stock`: every order changes its pet's stock entry, and a transaction that NOTIFYs takes a database-wide
 * lock from its pre-commit to its end, so that notifying commits run one at a time (no group commit): orders would
 * queue behind one another's WAL flush. The service announces stock changes itself after the commit, coalesced
 * (CatalogueCommits). A pet's status change, which the stock entry shows, is announced by the trigger on `pets`.
 *
 * An expand step: a function and two triggers, which the previous release neither reads nor needs; `CREATE TRIGGER`
 * takes a SHARE ROW EXCLUSIVE lock for milliseconds (reads go on). Outside a transaction, one statement per table, each
 * able to run again (CREATE OR REPLACE FUNCTION; a trigger created only where it is missing).
 */
export class CatalogueChangeSignals1796001000000 implements MigrationInterface {
  name = 'CatalogueChangeSignals1796001000000';
  readonly servesFrom = '1.0.0';
  readonly transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE OR REPLACE FUNCTION petstore_announce_catalogue_change() RETURNS trigger
      LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('${CATALOGUE_CHANGES_CHANNEL}', TG_TABLE_NAME);
        RETURN NULL;
      END $$`);
    for (const table of ANNOUNCED_TABLES) {
      // Created only where missing, never dropped first: on a rerun (the trigger there) DROP TRIGGER takes an ACCESS
      // EXCLUSIVE lock, which, queued behind a running write, would stop every read of the table; CREATE TRIGGER
      // takes SHARE ROW EXCLUSIVE (reads go on; writes wait at most the migration's lock timeout, then a retry).
      await q.query(`DO $$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_trigger
                        WHERE tgrelid = '${table}'::regclass AND tgname = '${table}_catalogue_changes') THEN
          CREATE TRIGGER ${table}_catalogue_changes AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${table}
            FOR EACH STATEMENT EXECUTE FUNCTION petstore_announce_catalogue_change();
        END IF;
      END $$`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ANNOUNCED_TABLES) {
      await q.query(`DROP TRIGGER IF EXISTS ${table}_catalogue_changes ON ${table}`);
    }
    await q.query(`DROP FUNCTION IF EXISTS petstore_announce_catalogue_change()`);
  }
}
