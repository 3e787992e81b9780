import { WebhookOutboundSettings } from '@petstore/application';
import {
  describeWebhookOutboundBudgetContract,
  describeWebhookRepositoryContract,
} from '@petstore/application/testing';
import { resetDatabase } from '@petstore/testing';
import { newAccountId, pgRepositories, useTestDatabase } from '../../../test/support/real-database';
import { PgEventLog } from '../events/pg-event-log.repository';
import { PgWebhookDeliveryRepository } from './pg-webhook-delivery.repository';
import { PgWebhookEndpointRepository } from './pg-webhook-endpoint.repository';
import { PgWebhookOutboundBudget } from './pg-webhook-outbound-budget';

describe('The webhook repositories on PostgreSQL (real database)', () => {
  const db = useTestDatabase();

  describeWebhookRepositoryContract('PostgreSQL', async () => {
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

  describeWebhookOutboundBudgetContract('PostgreSQL', async () => {
    await resetDatabase(db.dataSource);
    return {
      uow: pgRepositories(db.host).uow,
      budget: new PgWebhookOutboundBudget(db.host, new WebhookOutboundSettings(2)),
      unlimited: new PgWebhookOutboundBudget(db.host, new WebhookOutboundSettings(0)),
    };
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

  it("a recovery reads the endpoint's deliveries from `since` on, by the index of their creation time", async () => {
    const sent: { sql: string; params: unknown[] }[] = [];
    jest.spyOn(db.host, 'query').mockImplementation(async (sql: string, params: unknown[] = []) => {
      sent.push({ sql, params });
      return [];
    });
    jest.spyOn(db.host, 'requireTransaction').mockImplementation(() => undefined);
    try {
      const request = { endpointId: 1, since: new Date(), all: false, limit: 1000 };
      await new PgWebhookDeliveryRepository(db.host).recoverSince(request, () => new Date());
    } finally {
      jest.restoreAllMocks();
    }
    const runner = db.dataSource.createQueryRunner();
    try {
      await runner.startTransaction();
      await runner.query('SET LOCAL enable_seqscan = off');
      const rows: { 'QUERY PLAN': string }[] = await runner.query(`EXPLAIN ${sent[0].sql}`, sent[0].params);
      const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
      expect(plan).toContain('webhook_deliveries_endpoint_created_idx');
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  });
});
