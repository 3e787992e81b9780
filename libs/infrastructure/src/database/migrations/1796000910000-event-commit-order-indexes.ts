import { MigrationInterface, QueryRunner } from 'typeorm';
import { createConcurrently } from './1796000810000-webhook-queue-indexes';

/**
 * The indexes of the commit-order feed (EventCommitOrder1796000900000): by (transaction, seq) for an administrator,
 * by (subject_owner_id, transaction, seq) for a customer, pings left out as in the newest-first indexes. The rows
 * written before `xact_id` existed are NULL: the expression reads them as transaction 0 (the statements of
 * `PgEventLog` use the same expression, so that these indexes serve them).
 *
 * An expand step: indexes only, built `CONCURRENTLY` outside a transaction (`webhook_events` takes every order's
 * event, and a plain build would block its writes for as long as it scans).
 */
export class EventCommitOrderIndexes1796000910000 implements MigrationInterface {
  name = 'EventCommitOrderIndexes1796000910000';
  readonly servesFrom = '1.0.0';
  readonly transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await createConcurrently(
      q,
      'webhook_events_commit_idx',
      `ON webhook_events ((COALESCE(xact_id, '0'::xid8)), seq) WHERE endpoint_id IS NULL`,
    );
    await createConcurrently(
      q,
      'webhook_events_owner_commit_idx',
      `ON webhook_events (subject_owner_id, (COALESCE(xact_id, '0'::xid8)), seq) WHERE endpoint_id IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS webhook_events_owner_commit_idx`);
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS webhook_events_commit_idx`);
  }
}
