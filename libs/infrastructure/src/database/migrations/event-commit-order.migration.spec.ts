import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { useTestDatabase } from '../../../test/support/real-database';
import { PgEventLog } from '../../persistence/events/pg-event-log.repository';
import { EventCommits1796000930000 } from './1796000930000-event-commits';
import { EventCommitsBackfill1796000940000 } from './1796000940000-event-commits-backfill';

/** The previous release's INSERT of an event: its explicit columns. */
const PREVIOUS_RELEASE_INSERT = `INSERT INTO webhook_events (id, type, subject_owner_id, endpoint_id, body, created_at)
  VALUES ($1, 'order.placed', 5, NULL, $2, now())`;
/** The previous releases (1.0.0, 1.1.0) read events so, prepared on their pooled connections. */
const PREVIOUS_RELEASE_SELECT = `SELECT * FROM webhook_events WHERE id = $1`;

describe('migrations EventCommits1796000930000 and its backfill (real PostgreSQL)', () => {
  const db = useTestDatabase({ reset: true });

  it("keep the previous release's prepared SELECT * working; old events are transaction 0", async () => {
    const commits = new EventCommits1796000930000();
    const backfill = new EventCommitsBackfill1796000940000();
    const q = db.dataSource.createQueryRunner();
    // The previous release's pooled connection, with its statement prepared before the migration.
    const previous = new Client({ connectionString: db.url });
    await previous.connect();
    try {
      // Back to the schema before, with an event of then.
      await backfill.down(q);
      await commits.down(q);
      const before = randomUUID();
      await q.query(PREVIOUS_RELEASE_INSERT, [before, '{"label":"before"}']);
      const read = (id: string) =>
        previous.query({ name: 'previous-find', text: PREVIOUS_RELEASE_SELECT, values: [id] });
      expect((await read(before)).rows).toHaveLength(1);

      await q.startTransaction();
      await commits.up(q);
      await q.commitTransaction();

      // The previous release, still running, writes an event: the trigger records its transaction.
      await q.startTransaction();
      const [{ xact }] = await q.query(`SELECT pg_current_xact_id()::text AS xact`);
      const oldWriter = randomUUID();
      await q.query(PREVIOUS_RELEASE_INSERT, [oldWriter, '{"label":"old writer"}']);
      await q.commitTransaction();
      await backfill.up(q);
      await backfill.up(q); // again, as a retry would: nothing to do

      // Its prepared statement still runs: the row type of webhook_events did not change.
      expect((await read(oldWriter)).rows).toEqual([expect.objectContaining({ body: '{"label":"old writer"}' })]);

      const rows = await q.query(
        `SELECT e.body, c.xact_id::text AS xact FROM webhook_events e JOIN webhook_event_commits c USING (seq)
          ORDER BY e.seq`,
      );
      expect(rows).toEqual([
        { body: '{"label":"before"}', xact: '0' },
        { body: '{"label":"old writer"}', xact },
      ]);
      const valid = await q.query(
        `SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
          WHERE c.relname IN ('webhook_event_commits_xact_idx', 'webhook_event_commits_owner_idx') AND i.indisvalid
          ORDER BY c.relname`,
      );
      expect(valid.map((row: { relname: string }) => row.relname)).toEqual([
        'webhook_event_commits_owner_idx',
        'webhook_event_commits_xact_idx',
      ]);
      // The feed lists the row of before first, as transaction 0.
      const feed = await new PgEventLog(db.host).feed({ subjectOwnerId: 5 }, { limit: 10 });
      expect(feed.items.map((event) => [event.body, event.position.xact])).toEqual(
        expect.arrayContaining([['{"label":"before"}', '0']]),
      );
      expect(feed.items[0]?.body).toBe('{"label":"before"}');

      // A purge (the previous release's too) takes the events' rows with them.
      await q.query(`DELETE FROM webhook_events WHERE id = $1`, [before]);
      const [{ count }] = await q.query(`SELECT count(*)::int AS count FROM webhook_event_commits`);
      expect(count).toBe(1);

      // A row left behind under the seq the next event takes (a sequence restarted) is overwritten, not a refusal.
      await q.query(
        `INSERT INTO webhook_event_commits (seq, subject_owner_id, xact_id)
         SELECT nextval(pg_get_serial_sequence('webhook_events', 'seq')) + 1, 99, '1'::xid8`,
      );
      await q.query(PREVIOUS_RELEASE_INSERT, [randomUUID(), '{"label":"over a stale row"}']);
      const [latest] = await q.query(
        `SELECT c.subject_owner_id::int AS owner, c.xact_id <> '1'::xid8 AS recorded FROM webhook_event_commits c
          JOIN webhook_events e USING (seq) WHERE e.body = '{"label":"over a stale row"}'`,
      );
      expect(latest).toEqual({ owner: 5, recorded: true });
    } finally {
      await previous.end();
      if (q.isTransactionActive) await q.rollbackTransaction();
      // The schema as the other tests of this worker expect it, whatever happened above.
      await commits.up(q);
      await backfill.up(q);
      await q.query(`DELETE FROM webhook_events`);
      await q.release();
    }
  });

  it('backfills a log larger than one batch, in seq order, without missing or doubling an event', async () => {
    const commits = new EventCommits1796000930000();
    const backfill = new EventCommitsBackfill1796000940000();
    const q = db.dataSource.createQueryRunner();
    try {
      await backfill.down(q);
      await commits.down(q);
      await q.query(
        `INSERT INTO webhook_events (id, type, subject_owner_id, body, created_at)
         SELECT gen_random_uuid(), 'order.placed', n % 7, '{}', now() FROM generate_series(1, 25001) AS n`,
      );
      await commits.up(q);
      await backfill.up(q);
      const [counts] = await q.query(
        `SELECT (SELECT count(*)::int FROM webhook_event_commits) AS recorded,
                (SELECT count(*)::int FROM webhook_events e JOIN webhook_event_commits c
                   ON c.seq = e.seq AND c.subject_owner_id = e.subject_owner_id AND c.xact_id = '0') AS matching`,
      );
      expect(counts).toEqual({ recorded: 25001, matching: 25001 });
    } finally {
      await commits.up(q);
      await backfill.up(q);
      await q.query(`DELETE FROM webhook_events`);
      await q.release();
    }
  });
});
