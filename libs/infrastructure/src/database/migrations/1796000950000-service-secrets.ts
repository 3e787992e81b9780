import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Secrets the service keeps for itself (ServiceSecrets, PgServiceSecrets): `event-positions`, the key of the event
 * feed's positions (apps/api/src/events/event-positions.ts), 32 random bytes made by the first instance that asks. In
 * the database, not a setting: every instance reads the same, and a restored backup keeps the positions its
 * consumers saved.
 *
 * An expand step: a new table no earlier release reads.
 */
export class ServiceSecretsTable1796000950000 implements MigrationInterface {
  name = 'ServiceSecretsTable1796000950000';
  readonly servesFrom = '1.0.0';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE IF NOT EXISTS service_secrets (name text PRIMARY KEY, secret bytea NOT NULL)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS service_secrets`);
  }
}
