import { randomUUID } from 'node:crypto';
import { useTestDatabase } from '../../../test/support/real-database';
import { EventTypeIndex1796000920000 } from './1796000920000-event-type-index';

/** The previous release's INSERT of an event (its explicit columns). */
const INSERT_EVENT = `INSERT INTO webhook_events (id, type, subject_owner_id, endpoint_id, body, created_at)
  VALUES ($1, 'order.placed', 5, NULL, '{}', now())`;

describe('migration EventTypeIndex1796000920000 under writers (real PostgreSQL)', () => {
  const db = useTestDatabase({ reset: true });

  it('waits for a transaction open before it, never blocks an INSERT, ends valid; a retry does nothing', async () => {
    const migration = new EventTypeIndex1796000920000();
    const [q, holder, writer, watcher] = [1, 2, 3, 4].map(() => db.dataSource.createQueryRunner());
    try {
      await migration.down(q);
      // A writer of the previous release in the middle of a transaction on the table.
      await holder.startTransaction();
      await holder.query(INSERT_EVENT, [randomUUID()]);
      const build = migration.up(q);
      // The build waits for that transaction (as CONCURRENTLY does)…
      let waiting = false;
      for (let i = 0; i < 400 && !waiting; i++) {
        const rows = await watcher.query(
          `SELECT 1 FROM pg_stat_activity WHERE query LIKE 'CREATE INDEX CONCURRENTLY%' AND wait_event_type = 'Lock'`,
        );
        waiting = rows.length > 0;
        if (!waiting) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(waiting).toBe(true);
      // …while another writer's INSERT goes through at once (a plain CREATE INDEX would queue it behind itself).
      await writer.query('SET statement_timeout = 5000');
      await writer.query(INSERT_EVENT, [randomUUID()]);
      await holder.commitTransaction();
      await build;
      await migration.up(q); // again, as a retry would: nothing to do
      const [index] = await q.query(
        `SELECT i.indisvalid AS valid FROM pg_index i WHERE i.indexrelid = to_regclass('webhook_events_type_seq_idx')`,
      );
      expect(index).toEqual({ valid: true });
      const [{ count }] = await q.query(
        `SELECT count(*)::int AS count FROM webhook_events WHERE type = 'order.placed'`,
      );
      expect(count).toBe(2);
    } finally {
      if (holder.isTransactionActive) await holder.rollbackTransaction();
      await migration.up(q); // the schema as the other tests of this worker expect it
      await q.query(`DELETE FROM webhook_events`);
      for (const runner of [q, holder, writer, watcher]) await runner.release();
    }
  });
});
