import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Partial indexes for the webhook queue's gauges (`webhook_deliveries_pending`, `…_retrying`,
 * `…_oldest_due_age_seconds`, `webhook_endpoints_failing`), read on every scrape: each holds only the rows those
 * count (pending deliveries, failing endpoints still enabled), a few among the table's many, so a scrape reads
 * them and never the whole table. The second also serves the scheduled job that disables failing endpoints.
 * Indexes only: the previous release runs on the schema as it is.
 */
export class WebhookQueueIndexes1796000810000 implements MigrationInterface {
  name = 'WebhookQueueIndexes1796000810000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`,
    );
    await q.query(
      `CREATE INDEX webhook_endpoints_failing_idx ON webhook_endpoints (failing_since)
        WHERE failing_since IS NOT NULL AND disabled_at IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX webhook_endpoints_failing_idx`);
    await q.query(`DROP INDEX webhook_deliveries_pending_idx`);
  }
}
