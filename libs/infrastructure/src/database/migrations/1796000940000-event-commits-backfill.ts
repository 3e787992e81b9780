import { MigrationInterface, QueryRunner } from 'typeorm';
import { createConcurrently } from './1796000810000-webhook-queue-indexes';

/** Events per backfill batch: each batch is its own short transaction. */
const BATCH = 10_000;

/**
 * The events written before `webhook_event_commits` existed (EventCommits1796000930000) get their row as transaction
 * 0, the oldest: all of them committed before its trigger was created. Batches of `seq` up to the largest one when
 * the backfill starts (every later event has its row from the trigger), each its own transaction (no lock held
 * between them, writes go on); `ON CONFLICT DO NOTHING` keeps the trigger's rows, and makes a retry after a failure
 * half-way carry on. Then the indexes of the feed, built `CONCURRENTLY` once the table is full: by (xact_id, seq) for
 * an administrator and by (subject_owner_id, xact_id, seq) for a customer.
 *
 * An expand step: outside a transaction. On a large event log it takes a while (about 50 ms per 10,000 events, so
 * minutes for tens of millions); the release before serves meanwhile.
 */
export class EventCommitsBackfill1796000940000 implements MigrationInterface {
  name = 'EventCommitsBackfill1796000940000';
  readonly servesFrom = '1.0.0';
  readonly transaction = false;

  async up(q: QueryRunner): Promise<void> {
    const [{ last }] = await q.query(
      `SELECT COALESCE(max(seq), 0)::text AS last FROM webhook_events WHERE endpoint_id IS NULL`,
    );
    let from = '0';
    for (;;) {
      const [{ reached }] = await q.query(
        `WITH batch AS (
           SELECT seq, subject_owner_id FROM webhook_events
            WHERE endpoint_id IS NULL AND seq > $1::bigint AND seq <= $2::bigint ORDER BY seq LIMIT ${BATCH}
         ), recorded AS (
           INSERT INTO webhook_event_commits (seq, subject_owner_id, xact_id)
           SELECT seq, subject_owner_id, '0'::xid8 FROM batch ON CONFLICT (seq) DO NOTHING
         )
         SELECT max(seq)::text AS reached FROM batch`,
        [from, last],
      );
      if (reached === null || reached === undefined) break;
      from = String(reached);
    }
    await createConcurrently(q, 'webhook_event_commits_xact_idx', `ON webhook_event_commits (xact_id, seq)`);
    await createConcurrently(
      q,
      'webhook_event_commits_owner_idx',
      `ON webhook_event_commits (subject_owner_id, xact_id, seq)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS webhook_event_commits_owner_idx`);
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS webhook_event_commits_xact_idx`);
  }
}
