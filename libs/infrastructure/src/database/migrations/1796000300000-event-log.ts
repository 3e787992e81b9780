import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The outbox becomes the event log (`GET /events`): every event is written now, not only those some endpoint
 * receives. `seq` orders the log for keyset paging (a UUID does not); the lists read it newest first, every
 * event (an administrator) or one account's (a customer), pings left out (partial indexes). The purge of old
 * events reads `created_at` through a BRIN index: events are appended in time order, so a few block ranges
 * cover a day, and the index costs an insert next to nothing (a B-tree would cost every order a third index).
 */
export class EventLog1796000300000 implements MigrationInterface {
  name = 'EventLog1796000300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_events ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY`);
    await q.query(`CREATE UNIQUE INDEX webhook_events_seq_idx ON webhook_events (seq) WHERE endpoint_id IS NULL`);
    await q.query(
      `CREATE INDEX webhook_events_owner_seq_idx ON webhook_events (subject_owner_id, seq) WHERE endpoint_id IS NULL`,
    );
    await q.query(`CREATE INDEX webhook_events_created_brin ON webhook_events USING brin (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX webhook_events_created_brin`);
    await q.query(`DROP INDEX webhook_events_owner_seq_idx`);
    await q.query(`DROP INDEX webhook_events_seq_idx`);
    await q.query(`ALTER TABLE webhook_events DROP COLUMN seq`);
  }
}
