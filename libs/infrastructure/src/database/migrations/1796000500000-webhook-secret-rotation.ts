import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook secret rotation (Standard Webhooks): the secret an endpoint had before its last rotation, which signs
 * every delivery beside the new one until it expires. Both or neither.
 */
export class WebhookSecretRotation1796000500000 implements MigrationInterface {
  name = 'WebhookSecretRotation1796000500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE webhook_endpoints
        ADD COLUMN previous_secret            varchar(200),
        ADD COLUMN previous_secret_expires_at timestamptz,
        ADD CONSTRAINT webhook_endpoints_previous_secret_check
          CHECK ((previous_secret IS NULL) = (previous_secret_expires_at IS NULL))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE webhook_endpoints
        DROP CONSTRAINT webhook_endpoints_previous_secret_check,
        DROP COLUMN previous_secret_expires_at,
        DROP COLUMN previous_secret`);
  }
}
