import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Idempotency keys on every POST (issue 21 item 5):
 * - The key is kept as its SHA-256 (`key_hash`), no longer as the text the client sent: a result that shows a secret
 *   is sealed with a key derived from that text (docs/api.md, Idempotency), so the database alone must not hold it.
 *   Rows already there keep working: their hash is computed here, the same as the service computes it.
 * - `account_id` may be null: an operation without an API key (`POST /accounts`) keys its results by the key alone.
 *   One key per scope: a unique index on (account or 0, hash) (account ids start at 1), which any supported
 *   PostgreSQL has (a NULLS NOT DISTINCT constraint would need 15).
 * - `result_sealed`: the result is the sealed envelope, not the JSON text.
 */
export class IdempotencyKeyHashes1796000600000 implements MigrationInterface {
  name = 'IdempotencyKeyHashes1796000600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE idempotency_keys
        ADD COLUMN key_hash char(64),
        ADD COLUMN result_sealed boolean NOT NULL DEFAULT false`);
    await q.query(`UPDATE idempotency_keys SET key_hash = encode(sha256(convert_to(key, 'UTF8')), 'hex')`);
    await q.query(`
      ALTER TABLE idempotency_keys
        DROP CONSTRAINT idempotency_keys_pkey,
        DROP COLUMN key,
        ALTER COLUMN key_hash SET NOT NULL,
        ALTER COLUMN account_id DROP NOT NULL`);
    await q.query(
      `CREATE UNIQUE INDEX idempotency_keys_scope_key ON idempotency_keys ((coalesce(account_id, 0)), key_hash)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    // A hash does not give the key back, and anonymous rows have no account: the kept keys are dropped (they expire
    // within 24 hours anyway).
    await q.query(`DELETE FROM idempotency_keys`);
    await q.query(`DROP INDEX idempotency_keys_scope_key`);
    await q.query(`
      ALTER TABLE idempotency_keys
        DROP COLUMN key_hash,
        DROP COLUMN result_sealed,
        ADD COLUMN key varchar(255) NOT NULL,
        ALTER COLUMN account_id SET NOT NULL,
        ADD PRIMARY KEY (account_id, key)`);
  }
}
