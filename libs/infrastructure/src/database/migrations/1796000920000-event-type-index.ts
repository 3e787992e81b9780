import { MigrationInterface, QueryRunner } from 'typeorm';
import { createConcurrently } from './1796000810000-webhook-queue-indexes';

/**
 * The index of `GET /events?type=…` for an administrator, newest first: by (type, seq), pings left out as in the
 * other list indexes. Without it, a rare type (one event in 10,000) was listed by walking every event backwards
 * from the newest: 15 requests a second at 30,000,000 events. `PgEventLog` reads it once per type asked for and
 * merges the pages, so that a common type costs no more than a rare one.
 *
 * An expand step: an index only, built `CONCURRENTLY` outside a transaction (`webhook_events` takes every order's
 * event, and a plain build would block its writes for as long as it scans).
 */
export class EventTypeIndex1796000920000 implements MigrationInterface {
  name = 'EventTypeIndex1796000920000';
  readonly servesFrom = '1.0.0';
  readonly transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await createConcurrently(
      q,
      'webhook_events_type_seq_idx',
      `ON webhook_events (type, seq) WHERE endpoint_id IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS webhook_events_type_seq_idx`);
  }
}
