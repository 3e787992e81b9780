import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The event log in commit order (`GET /events?order=commit`, `startingAfter`, `endingBefore`): each event records the
 * id of the transaction that wrote it (`xact_id`, `pg_current_xact_id()`: an `xid8`, 64 bits, never wrapping). A
 * feed ordered by (xact_id, seq) that lists only the events whose transaction is older than the oldest one still in
 * progress (`pg_snapshot_xmin(pg_current_snapshot())`) never shows an event before one that can still appear ahead
 * of it, so a consumer paging forward from its last position skips nothing, whatever order the writers commit in
 * (`seq` is taken at the INSERT, before the commit, so a transaction that commits late lands behind a later `seq`).
 *
 * An expand step (docs/development.md, "Migrations without downtime"): a nullable column without a default is a
 * change of the catalogue only (no rewrite); the default is set by a second `ALTER`, so it applies to new rows alone
 * (a volatile default given with `ADD COLUMN` would rewrite the table under its lock). The release before writes its
 * events with an explicit column list, so its INSERTs take the default too. The rows written before are left NULL:
 * the feed reads them as transaction 0, the oldest (all of them committed before this migration took its lock).
 * Its indexes are built CONCURRENTLY by the next migration.
 */
export class EventCommitOrder1796000900000 implements MigrationInterface {
  name = 'EventCommitOrder1796000900000';
  readonly servesFrom = '1.0.0';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_events ADD COLUMN IF NOT EXISTS xact_id xid8`);
    await q.query(`ALTER TABLE webhook_events ALTER COLUMN xact_id SET DEFAULT pg_current_xact_id()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_events DROP COLUMN IF EXISTS xact_id`);
  }
}
