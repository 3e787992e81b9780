import { resetDatabase } from '@petstore/testing';
import { useTestDatabase } from '../../../test/support/real-database';
import { PgEventLog } from './pg-event-log.repository';

describe('The event log on PostgreSQL (real database)', () => {
  const db = useTestDatabase();

  describe('the event log reads through its indexes (planner told to avoid sequential scans)', () => {
    /** The plan of the one statement `run` sends through the host, with the parameters it sent. */
    async function planOf(run: (log: PgEventLog) => Promise<unknown>): Promise<string> {
      const sent: { sql: string; params: unknown[] }[] = [];
      const spy = jest.spyOn(db.host, 'query').mockImplementation(async (sql: string, params?: unknown[]) => {
        sent.push({ sql, params: params ?? [] });
        return [];
      });
      const execute = jest.spyOn(db.host, 'execute').mockImplementation(async (sql: string, params?: unknown[]) => {
        sent.push({ sql, params: params ?? [] });
        return { rows: [], affected: 0 };
      });
      try {
        await run(new PgEventLog(db.host));
      } finally {
        spy.mockRestore();
        execute.mockRestore();
      }
      expect(sent).toHaveLength(1);
      const runner = db.dataSource.createQueryRunner();
      try {
        await runner.startTransaction();
        await runner.query('SET LOCAL enable_seqscan = off');
        const rows: { 'QUERY PLAN': string }[] = await runner.query(`EXPLAIN ${sent[0].sql}`, sent[0].params);
        return rows.map((row) => row['QUERY PLAN']).join('\n');
      } finally {
        await runner.rollbackTransaction();
        await runner.release();
      }
    }

    // A log of 50,000 events of 500 accounts (and the catalogue's, every account's) over 50 days, appended in time
    // order, with statistics.
    beforeAll(async () => {
      await resetDatabase(db.dataSource);
      await db.dataSource.query(
        `INSERT INTO webhook_events (id, type, subject_owner_id, body, created_at)
         SELECT gen_random_uuid(),
                CASE n % 10 WHEN 0 THEN 'pet.status_changed' WHEN 5 THEN 'inventory.changed' ELSE 'order.placed' END,
                CASE n % 10 WHEN 0 THEN NULL WHEN 5 THEN 0 ELSE n % 500 END, '{}',
                timestamptz '2026-01-01' + n * interval '86 seconds'
           FROM generate_series(1, 50000) AS n`,
      );
      await db.dataSource.query('ANALYZE webhook_events');
    });

    it("a customer's page by (subject_owner_id, seq), an administrator's by seq, newest first", async () => {
      expect(await planOf((log) => log.list({ subjectOwnerId: 7 }, { limit: 20, afterId: 1000 }))).toContain(
        'webhook_events_owner_seq_idx',
      );
      expect(await planOf((log) => log.list({ types: ['order.placed'] }, { limit: 20 }))).toContain(
        'webhook_events_seq_idx',
      );
    });

    it("a customer's page (its events and the catalogue's) reads two index ranges, newest first", async () => {
      const plan = await planOf((log) => log.list({ subjectOwnerId: 7 }, { limit: 20, afterId: 40_000 }));
      // Each branch walks an index newest first and stops at the page's size (the catalogue's, 1 event in 10 here,
      // by (subject_owner_id, seq) or by seq, as the planner likes): nothing reads every event of an owner to sort it.
      expect(plan.match(/Index Scan Backward using webhook_events_(owner_)?seq_idx/g)).toHaveLength(2);
      expect(plan).toContain('webhook_events_owner_seq_idx');
      expect(plan).not.toMatch(/Seq Scan|Bitmap/);
    });

    it('the purge finds the old events through the BRIN index on created_at', async () => {
      expect(await planOf((log) => log.purgeBatch(new Date('2026-01-01T00:00:00Z'), 10_000))).toContain(
        'webhook_events_created_brin',
      );
    });
  });

  describe("a customer's list", () => {
    const log = () => new PgEventLog(db.host);
    beforeAll(async () => {
      await resetDatabase(db.dataSource);
      // seq 1…12: owner 7's order, owner 8's order, the store's status change, then the catalogue's, in turns.
      await db.dataSource.query(
        `INSERT INTO webhook_events (id, type, subject_owner_id, body, created_at)
         SELECT gen_random_uuid(), t.type, t.owner, '{}', timestamptz '2026-01-01' + n * interval '1 second'
           FROM generate_series(1, 12) AS n,
                LATERAL (SELECT (ARRAY['order.placed', 'order.placed', 'pet.status_changed', 'pet.updated',
                                       'inventory.changed', 'category.created'])[(n - 1) % 6 + 1] AS type,
                                (ARRAY[7, 8, NULL, 0, 0, 0])[(n - 1) % 6 + 1]::bigint AS owner) AS t
          ORDER BY n`,
      );
    });

    it("holds its own and the catalogue's, newest first, paged, filtered; never another's or the store's", async () => {
      const seen = async (query: Parameters<PgEventLog['list']>[0], afterId?: number) =>
        (await log().list(query, { limit: 3, afterId })).items.map((event) => [event.seq, event.type]);
      const first = await log().list({ subjectOwnerId: 7 }, { limit: 3 });
      expect(first.items.map((event) => [event.seq, event.type])).toEqual([
        [12, 'category.created'],
        [11, 'inventory.changed'],
        [10, 'pet.updated'],
      ]);
      expect(first.nextAfterId).toBe(10);
      expect(await seen({ subjectOwnerId: 7 }, 10)).toEqual([
        [7, 'order.placed'],
        [6, 'category.created'],
        [5, 'inventory.changed'],
      ]);
      expect(await seen({ subjectOwnerId: 7, types: ['order.placed', 'pet.status_changed', 'pet.updated'] })).toEqual([
        [10, 'pet.updated'],
        [7, 'order.placed'],
        [4, 'pet.updated'],
      ]);
      expect(await seen({ subjectOwnerId: 9, types: ['order.placed'] })).toEqual([]);
    });
  });
});
