import { MigrationInterface, QueryRunner } from 'typeorm';
import { createConcurrently } from './1796000810000-webhook-queue-indexes';

/**
 * The index of `POST /webhooks/endpoints/{id}/recover`: an endpoint's deliveries by the time they were created, so that
 * a recovery since some time reads that endpoint's deliveries from then on, oldest first, and stops after its batch,
 * instead of every delivery the endpoint has had in the retention period (`webhook_deliveries_endpoint_idx` is by id).
 *
 * An expand step: an index only, which the release before ignores; built `CONCURRENTLY` outside a transaction, since
 * `webhook_deliveries` takes every event's deliveries and a plain build would block their writes while it scans.
 */
export class WebhookRecoveryIndex1796000970000 implements MigrationInterface {
  name = 'WebhookRecoveryIndex1796000970000';
  readonly servesFrom = '1.0.0';
  readonly transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await createConcurrently(
      q,
      'webhook_deliveries_endpoint_created_idx',
      `ON webhook_deliveries (endpoint_id, created_at, id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS webhook_deliveries_endpoint_created_idx`);
  }
}
