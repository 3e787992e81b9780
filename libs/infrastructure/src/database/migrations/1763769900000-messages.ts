import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Messages of `POST /messages`, which are also the delivery queue: workers take due rows with
 * `FOR UPDATE SKIP LOCKED`. `id` is the public UUID; `seq` (bigserial) is internal, the
 * sortable key of keyset pagination (UUIDs do not sort by age).
 */
export class Messages1763769900000 implements MigrationInterface {
  name = 'Messages1763769900000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE messages (
        id               uuid          PRIMARY KEY,
        seq              bigserial     NOT NULL UNIQUE,
        owner_id         bigint        NOT NULL REFERENCES accounts(id),
        body             varchar(2000) NOT NULL CHECK (char_length(body) >= 1),
        status           varchar(16)   NOT NULL CHECK (status IN ('queued', 'delivered')),
        created_at       timestamptz   NOT NULL,
        delivered_at     timestamptz,
        attempts         integer       NOT NULL DEFAULT 0 CHECK (attempts >= 0),
        next_attempt_at  timestamptz   NOT NULL,
        last_error       varchar(1000),
        CONSTRAINT messages_delivered_at_ck CHECK ((status = 'delivered') = (delivered_at IS NOT NULL))
      )`);
    // What the workers poll: only queued rows, the longest-due first.
    await q.query(`CREATE INDEX messages_due_idx ON messages (next_attempt_at, seq) WHERE status = 'queued'`);
    // The inbox filtered by status, in seq order.
    await q.query(`CREATE INDEX messages_status_seq_idx ON messages (status, seq)`);
    await q.query(`CREATE INDEX messages_owner_idx ON messages (owner_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE messages`);
  }
}
