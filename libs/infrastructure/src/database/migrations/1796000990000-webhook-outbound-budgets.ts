import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each account's outbound budget for fanned-out webhook deliveries (WebhookOutboundBudget, PgWebhookOutboundBudget):
 * one row per account that has had deliveries, holding the theoretical arrival time of its next one. No foreign key:
 * the row is a counter, and a deleted account's row is harmless (and small).
 *
 * An expand step: a new table no earlier release reads.
 */
export class WebhookOutboundBudgets1796000990000 implements MigrationInterface {
  name = 'WebhookOutboundBudgets1796000990000';
  readonly servesFrom = '1.0.0';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE IF NOT EXISTS webhook_outbound_budgets (owner_id bigint PRIMARY KEY, tat timestamptz NOT NULL)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS webhook_outbound_budgets`);
  }
}
