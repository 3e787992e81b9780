import { MigrationInterface, QueryRunner } from 'typeorm';

/** Responses kept under Idempotency-Key for 24 hours, per account. */
export class IdempotencyKeys1763770000000 implements MigrationInterface {
  name = 'IdempotencyKeys1763770000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE idempotency_keys (
        account_id        bigint       NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        key               varchar(255) NOT NULL,
        fingerprint       char(64)     NOT NULL,
        response_status   smallint     NOT NULL,
        response_body     jsonb,
        response_headers  jsonb        NOT NULL DEFAULT '{}',
        created_at        timestamptz  NOT NULL DEFAULT now(),
        expires_at        timestamptz  NOT NULL,
        PRIMARY KEY (account_id, key)
      )`);
    await q.query(`CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE idempotency_keys`);
  }
}
