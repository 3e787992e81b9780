import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Idempotency keys keep the command's result as text, no longer an HTTP response in jsonb
 * (jsonb reorders an object's keys, so a replay was not the first response's bytes).
 * Rows already there stay readable: their body becomes text (jsonb's rendering, the same JSON value)
 * and their Location the created resource, so a retry within their 24 hours is still a replay,
 * never a second order.
 */
export class IdempotencyResults1764000300000 implements MigrationInterface {
  name = 'IdempotencyResults1764000300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE idempotency_keys ADD COLUMN result text, ADD COLUMN created_resource text`);
    await q.query(`
      UPDATE idempotency_keys
         SET result = coalesce(response_body::text, 'null'), created_resource = response_headers->>'location'`);
    await q.query(`
      ALTER TABLE idempotency_keys
        ALTER COLUMN result SET NOT NULL,
        DROP COLUMN response_status,
        DROP COLUMN response_body,
        DROP COLUMN response_headers`);
  }

  async down(q: QueryRunner): Promise<void> {
    // A result does not say which status it was answered with: the kept keys are dropped (they expire
    // within 24 hours anyway).
    await q.query(`DELETE FROM idempotency_keys`);
    await q.query(`
      ALTER TABLE idempotency_keys
        DROP COLUMN result,
        DROP COLUMN created_resource,
        ADD COLUMN response_status smallint NOT NULL,
        ADD COLUMN response_body jsonb,
        ADD COLUMN response_headers jsonb NOT NULL DEFAULT '{}'`);
  }
}
