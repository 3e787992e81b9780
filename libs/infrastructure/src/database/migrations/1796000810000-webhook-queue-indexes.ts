import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Partial indexes for the webhook queue's gauges (`webhook_deliveries_pending`, `…_retrying`,
 * `…_oldest_due_age_seconds`, `webhook_endpoints_failing`), read on every scrape: each holds only the rows those
 * count (pending deliveries, failing endpoints still enabled), a few among the table's many, so a scrape reads
 * them and never the whole table. The second also serves the scheduled job that disables failing endpoints.
 *
 * An expand step (docs/development.md, "Migrations without downtime"): indexes only, so the release before serves
 * the schema as it is; built `CONCURRENTLY` outside a transaction, since `webhook_deliveries` grows with every event
 * and a plain build would block its writes (every order's delivery) for as long as it scans. A build that failed
 * half-way leaves an INVALID index of the same name: dropped first, so a retry builds it again.
 */
export class WebhookQueueIndexes1796000810000 implements MigrationInterface {
  name = 'WebhookQueueIndexes1796000810000';
  readonly servesFrom = '1.0.0';
  readonly transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await createConcurrently(
      q,
      'webhook_deliveries_pending_idx',
      `ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`,
    );
    await createConcurrently(
      q,
      'webhook_endpoints_failing_idx',
      `ON webhook_endpoints (failing_since) WHERE failing_since IS NOT NULL AND disabled_at IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS webhook_endpoints_failing_idx`);
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS webhook_deliveries_pending_idx`);
  }
}

/**
 * `CREATE INDEX CONCURRENTLY IF NOT EXISTS`, after dropping an INVALID index of that name a failed try left (the later
 * migrations that build an index use it too).
 */
export async function createConcurrently(q: QueryRunner, name: string, definition: string): Promise<void> {
  const [{ invalid }] = await q.query(
    `SELECT EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass($1) AND NOT indisvalid) AS invalid`,
    [name],
  );
  if (invalid) await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
  await q.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${name} ${definition}`);
}
