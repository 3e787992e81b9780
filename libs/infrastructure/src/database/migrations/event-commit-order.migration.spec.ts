import { randomUUID } from 'node:crypto';
import { useTestDatabase } from '../../../test/support/real-database';
import { PgEventLog } from '../../persistence/events/pg-event-log.repository';
import { EventCommitOrder1796000900000 } from './1796000900000-event-commit-order';
import { EventCommitOrderIndexes1796000910000 } from './1796000910000-event-commit-order-indexes';

/** The previous release's INSERT of an event: its explicit columns, without `xact_id`. */
const PREVIOUS_RELEASE_INSERT = `INSERT INTO webhook_events (id, type, subject_owner_id, endpoint_id, body, created_at)
  VALUES ($1, 'order.placed', 5, NULL, $2, now())`;

describe('migrations EventCommitOrder1796000900000 and its indexes (real PostgreSQL)', () => {
  const db = useTestDatabase({ reset: true });

  it('add the column without rewriting the table; old rows count as transaction 0, old writers fill it', async () => {
    const column = new EventCommitOrder1796000900000();
    const indexes = new EventCommitOrderIndexes1796000910000();
    const q = db.dataSource.createQueryRunner();
    try {
      // Back to the schema before (the indexes outside a transaction, as they are built), with an event of then.
      await indexes.down(q);
      await column.down(q);
      await q.query(PREVIOUS_RELEASE_INSERT, [randomUUID(), '{"label":"before"}']);
      const [{ before }] = await q.query(`SELECT pg_relation_filenode('webhook_events') AS before`);

      await q.startTransaction();
      await column.up(q);
      await q.commitTransaction();
      const [{ after }] = await q.query(`SELECT pg_relation_filenode('webhook_events') AS after`);
      expect(after).toBe(before); // no rewrite: the same file

      // The previous release, still running, writes an event: the default records its transaction.
      await q.startTransaction();
      const [{ xact }] = await q.query(`SELECT pg_current_xact_id()::text AS xact`);
      await q.query(PREVIOUS_RELEASE_INSERT, [randomUUID(), '{"label":"old writer"}']);
      await q.commitTransaction();
      await indexes.up(q);
      await indexes.up(q); // again, as a retry would: nothing to do

      const rows = await q.query(`SELECT body, xact_id::text AS xact FROM webhook_events ORDER BY seq`);
      expect(rows).toEqual([
        { body: '{"label":"before"}', xact: null },
        { body: '{"label":"old writer"}', xact },
      ]);
      const valid = await q.query(
        `SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
          WHERE c.relname IN ('webhook_events_commit_idx', 'webhook_events_owner_commit_idx') AND i.indisvalid
          ORDER BY c.relname`,
      );
      expect(valid.map((row: { relname: string }) => row.relname)).toEqual([
        'webhook_events_commit_idx',
        'webhook_events_owner_commit_idx',
      ]);
      // The feed lists the row of before first, as transaction 0.
      const feed = await new PgEventLog(db.host).feed({ subjectOwnerId: 5 }, { limit: 10 });
      expect(feed.items.map((event) => [event.body, event.position.xact])).toEqual(
        expect.arrayContaining([['{"label":"before"}', '0']]),
      );
      expect(feed.items[0]?.body).toBe('{"label":"before"}');
    } finally {
      if (q.isTransactionActive) await q.rollbackTransaction();
      // The schema as the other tests of this worker expect it, whatever happened above.
      await q.query(`ALTER TABLE webhook_events ADD COLUMN IF NOT EXISTS xact_id xid8`);
      await column.up(q);
      await indexes.up(q);
      await q.query(`DELETE FROM webhook_events`);
      await q.release();
    }
  });
});
