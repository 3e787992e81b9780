import { describeWebhookRepositoryContract } from '@petstore/application/testing';
import { resetDatabase } from '@petstore/testing';
import { newAccountId, pgRepositories, useTestDatabase } from '../../../test/support/real-database';
import { PgEventLog } from '../events/pg-event-log.repository';
import { PgWebhookDeliveryRepository } from './pg-webhook-delivery.repository';
import { PgWebhookEndpointRepository } from './pg-webhook-endpoint.repository';

describe('The webhook repositories on PostgreSQL (real database)', () => {
  const db = useTestDatabase();

  describeWebhookRepositoryContract('SQL on PostgreSQL', async () => {
    await resetDatabase(db.dataSource);
    const { accounts, uow } = pgRepositories(db.host);
    return {
      uow,
      endpoints: new PgWebhookEndpointRepository(db.host),
      deliveries: new PgWebhookDeliveryRepository(db.host),
      events: new PgEventLog(db.host),
      newAccountId: (role) => newAccountId(accounts, role),
      // The outbox's own adapter also sends the event's fan-out job (pg-boss, covered by the HTTP tests):
      // the contract needs only the row.
      addEvent: async (event) => {
        await db.host.query(
          `INSERT INTO webhook_events (id, type, subject_owner_id, endpoint_id, body, created_at)
           VALUES ($1, $2, $3, $4, $5, $6)`,
          [event.id, event.type, event.subjectOwnerId, event.endpointId, event.body, event.createdAt],
        );
      },
    };
  });

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

    it("the queue's gauges read the partial indexes of pending deliveries and failing endpoints", async () => {
      const sent: { sql: string }[] = [];
      const spy = jest.spyOn(db.host, 'query').mockImplementation(async (sql: string) => {
        sent.push({ sql });
        return [{ pending: 0, retrying: 0, due: null, failing: 0 }];
      });
      try {
        await new PgWebhookDeliveryRepository(db.host).queueStats();
      } finally {
        spy.mockRestore();
      }
      const runner = db.dataSource.createQueryRunner();
      try {
        await runner.startTransaction();
        await runner.query('SET LOCAL enable_seqscan = off');
        const rows: { 'QUERY PLAN': string }[] = await runner.query(`EXPLAIN ${sent[0].sql}`);
        const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
        expect(plan).toContain('webhook_deliveries_pending_idx');
        expect(plan).toContain('webhook_endpoints_failing_idx');
      } finally {
        await runner.rollbackTransaction();
        await runner.release();
      }
    });

    it('the purge finds the old events through the BRIN index on created_at', async () => {
      expect(await planOf((log) => log.purgeBatch(new Date('2026-01-01T00:00:00Z'), 10_000))).toContain(
        'webhook_events_created_brin',
      );
    });
  });
});
