import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The event log in commit order (`GET /events?order=commit`, `startingAfter`, `endingBefore`): each event's writing
 * transaction (`pg_current_xact_id()`: an `xid8`, 64 bits, never wrapping) is kept in `webhook_event_commits`, one
 * row per event (pings left out), by `seq`. A feed ordered by (xact_id, seq) that lists only the events whose
 * transaction is older than the oldest one still in progress (`pg_snapshot_xmin(pg_current_snapshot())`) never shows
 * an event before one that can still appear ahead of it, so a consumer paging forward from its last position skips
 * nothing, whatever order the writers commit in (`seq` is taken at the INSERT, before the commit).
 *
 * Beside `webhook_events`, not a column of it: the releases before select `*` from `webhook_events` in prepared
 * statements, and a column added there makes every such statement fail ("cached plan must not change result type")
 * until their connections are recycled. A table and two triggers change no row type.
 *
 * The rows are written by statement-level triggers on `webhook_events` (transition tables: one INSERT per statement,
 * whatever the number of events), so the events of every writer are recorded, the release before's included; the
 * purge's DELETEs (this release's and the release before's) take their rows with them; a row left behind with the
 * same `seq` (a TRUNCATE of `webhook_events` alone, its sequence restarted) is overwritten, never a reason to refuse
 * an event. An expand step
 * (docs/development.md, "Migrations without downtime"): `CREATE TRIGGER` takes a SHARE ROW EXCLUSIVE lock on
 * `webhook_events` for a moment (under the migration's lock timeout, retried); it waits for the transactions writing
 * events to end, so every event written after it has its row, and every event without one committed before it. Those
 * are backfilled as transaction 0, the oldest, by EventCommitsBackfill1796000940000, which also builds the indexes.
 */
export class EventCommits1796000930000 implements MigrationInterface {
  name = 'EventCommits1796000930000';
  readonly servesFrom = '1.0.0';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE IF NOT EXISTS webhook_event_commits (
      seq bigint PRIMARY KEY,
      subject_owner_id bigint,
      xact_id xid8 NOT NULL
    )`);
    await q.query(`CREATE OR REPLACE FUNCTION petstore_record_event_commits() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO webhook_event_commits (seq, subject_owner_id, xact_id)
          SELECT seq, subject_owner_id, pg_current_xact_id() FROM inserted WHERE endpoint_id IS NULL
          ON CONFLICT (seq) DO UPDATE SET subject_owner_id = EXCLUDED.subject_owner_id, xact_id = EXCLUDED.xact_id;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE OR REPLACE FUNCTION petstore_forget_event_commits() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM webhook_event_commits AS c USING deleted WHERE c.seq = deleted.seq;
        RETURN NULL;
      END $$`);
    await q.query(`DROP TRIGGER IF EXISTS webhook_events_record_commits ON webhook_events`);
    await q.query(`CREATE TRIGGER webhook_events_record_commits AFTER INSERT ON webhook_events
      REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION petstore_record_event_commits()`);
    await q.query(`DROP TRIGGER IF EXISTS webhook_events_forget_commits ON webhook_events`);
    await q.query(`CREATE TRIGGER webhook_events_forget_commits AFTER DELETE ON webhook_events
      REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION petstore_forget_event_commits()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS webhook_events_forget_commits ON webhook_events`);
    await q.query(`DROP TRIGGER IF EXISTS webhook_events_record_commits ON webhook_events`);
    await q.query(`DROP FUNCTION IF EXISTS petstore_forget_event_commits()`);
    await q.query(`DROP FUNCTION IF EXISTS petstore_record_event_commits()`);
    await q.query(`DROP TABLE IF EXISTS webhook_event_commits`);
  }
}
