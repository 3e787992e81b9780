import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Message delivery moves onto the pg-boss job queue (its own schema, `pgboss`, created at start-up):
 * the queue keeps when the next attempt is due, so `next_attempt_at` and its index go out of use
 * (the column stays, nullable, so that instances of the previous release keep working during a
 * rolling deploy; a later release drops it). A message whose attempts are all used up is `failed`.
 */
export class MessageDeliveryJobs1763942460000 implements MigrationInterface {
  name = 'MessageDeliveryJobs1763942460000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages DROP CONSTRAINT messages_status_check`);
    await q.query(
      `ALTER TABLE messages ADD CONSTRAINT messages_status_check CHECK (status IN ('queued', 'delivered', 'failed'))`,
    );
    await q.query(`ALTER TABLE messages ALTER COLUMN next_attempt_at DROP NOT NULL`);
    await q.query(`DROP INDEX messages_due_idx`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX messages_due_idx ON messages (next_attempt_at, seq) WHERE status = 'queued'`);
    await q.query(`UPDATE messages SET next_attempt_at = created_at WHERE next_attempt_at IS NULL`);
    await q.query(`ALTER TABLE messages ALTER COLUMN next_attempt_at SET NOT NULL`);
    await q.query(`UPDATE messages SET status = 'queued' WHERE status = 'failed'`);
    await q.query(`ALTER TABLE messages DROP CONSTRAINT messages_status_check`);
    await q.query(
      `ALTER TABLE messages ADD CONSTRAINT messages_status_check CHECK (status IN ('queued', 'delivered'))`,
    );
  }
}
