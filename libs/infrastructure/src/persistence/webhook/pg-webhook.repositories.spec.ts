import { anAccount, describeWebhookRepositoryContract } from '@petstore/application/testing';
import { resetDatabase, testDatabaseUrl } from '@petstore/testing';
import { DataSource } from 'typeorm';
import { createDataSource } from '../../database/data-source';
import { TransactionHost, TypeOrmUnitOfWork } from '../../database/transaction-host';
import { PgAccountRepository } from '../account/pg-account.repository';
import { PgEventLog, PgWebhookDeliveryRepository, PgWebhookEndpointRepository } from './pg-webhook.repositories';

describe('The webhook repositories on PostgreSQL (real database)', () => {
  let dataSource: DataSource;
  let host: TransactionHost;

  beforeAll(async () => {
    dataSource = await createDataSource(await testDatabaseUrl()).initialize();
    host = new TransactionHost(dataSource);
  });
  afterAll(() => dataSource.destroy());

  describeWebhookRepositoryContract('SQL on PostgreSQL', async () => {
    await resetDatabase(dataSource);
    const accounts = new PgAccountRepository(host);
    return {
      uow: new TypeOrmUnitOfWork(host),
      endpoints: new PgWebhookEndpointRepository(host),
      deliveries: new PgWebhookDeliveryRepository(host),
      events: new PgEventLog(host),
      newAccountId: async (role) =>
        (await (role === 'admin' ? anAccount().admin() : anAccount()).saveIn({ accounts })).id,
      // The outbox's own adapter also sends the event's fan-out job (pg-boss, covered by the HTTP tests):
      // the contract needs only the row.
      addEvent: async (event) => {
        await host.query(
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
      const spy = jest.spyOn(host, 'query').mockImplementation(async (sql: string, params?: unknown[]) => {
        sent.push({ sql, params: params ?? [] });
        return [];
      });
      const execute = jest.spyOn(host, 'execute').mockImplementation(async (sql: string, params?: unknown[]) => {
        sent.push({ sql, params: params ?? [] });
        return { rows: [], affected: 0 };
      });
      try {
        await run(new PgEventLog(host));
      } finally {
        spy.mockRestore();
        execute.mockRestore();
      }
      expect(sent).toHaveLength(1);
      const runner = dataSource.createQueryRunner();
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
      await resetDatabase(dataSource);
      await dataSource.query(
        `INSERT INTO webhook_events (id, type, subject_owner_id, body, created_at)
         SELECT gen_random_uuid(), CASE WHEN n % 10 = 0 THEN 'pet.status_changed' ELSE 'order.placed' END,
                CASE WHEN n % 10 = 0 THEN NULL ELSE n % 500 END, '{}',
                timestamptz '2026-01-01' + n * interval '86 seconds'
           FROM generate_series(1, 50000) AS n`,
      );
      await dataSource.query('ANALYZE webhook_events');
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
