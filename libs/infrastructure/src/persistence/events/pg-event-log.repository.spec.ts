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

    // A log of 50,000 events of 500 accounts over 50 days, appended in time order, with statistics.
    beforeAll(async () => {
      await resetDatabase(db.dataSource);
      await db.dataSource.query(
        `INSERT INTO webhook_events (id, type, subject_owner_id, body, created_at)
         SELECT gen_random_uuid(), CASE WHEN n % 10 = 0 THEN 'pet.status_changed' ELSE 'order.placed' END,
                CASE WHEN n % 10 = 0 THEN NULL ELSE n % 500 END, '{}',
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

    it('the purge finds the old events through the BRIN index on created_at', async () => {
      expect(await planOf((log) => log.purgeBatch(new Date('2026-01-01T00:00:00Z'), 10_000))).toContain(
        'webhook_events_created_brin',
      );
    });
  });
});
