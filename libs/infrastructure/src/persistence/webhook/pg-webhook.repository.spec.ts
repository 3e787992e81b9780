import { WebhookOutboundSettings } from '@petstore/application';
import {
  describeWebhookOutboundBudgetContract,
  describeWebhookRepositoryContract,
} from '@petstore/application/testing';
import { WebhookEndpoint } from '@petstore/domain';
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

  it("a worker's attempts begun together read targets in one statement and record outcomes in batches", async () => {
    await resetDatabase(db.dataSource);
    const { accounts } = pgRepositories(db.host);
    const owner = await newAccountId(accounts, 'customer');
    const endpoints = new PgWebhookEndpointRepository(db.host);
    const deliveries = new PgWebhookDeliveryRepository(db.host);
    const endpointIds: number[] = [];
    for (let i = 0; i < 30; i++) {
      const created = WebhookEndpoint.create({
        id: await endpoints.nextId(),
        ownerId: owner,
        ownerIsAdmin: false,
        url: `https://hooks.example/${i}`,
        events: ['order.placed'],
        secret: 'whsec_batch',
        now: new Date(),
      });
      await endpoints.add(created);
      endpointIds.push(created.id);
    }
    const eventId = '00000000-0000-4000-8000-00000000b001';
    await db.host.query(
      `INSERT INTO webhook_events (id, type, subject_owner_id, endpoint_id, body, created_at)
       VALUES ($1, 'order.placed', $2, NULL, '{}', now())`,
      [eventId, owner],
    );
    const ids = await deliveries.createFor(eventId, endpointIds, new Date());
    const statements: string[] = [];
    const query = db.host.query.bind(db.host);
    const counting = jest.spyOn(db.host, 'query').mockImplementation((sql, params) => {
      statements.push(sql);
      return query(sql, params);
    });
    try {
      const targets = await Promise.all(ids.map((id) => deliveries.findTarget(id)));
      expect(targets.map((target) => target?.delivery.id)).toEqual(ids);
      expect(statements).toHaveLength(1);
      statements.length = 0;
      const outcome = { attempt: 1, previousAttempts: 0, status: 'delivered' as const, statusCode: 200, error: null };
      const recorded = await Promise.all(
        ids.map((deliveryId) =>
          deliveries.recordAttempt({ ...outcome, deliveryId, nextAttemptAt: null, at: new Date() }),
        ),
      );
      expect(recorded.every(Boolean)).toBe(true);
      // Reported in one tick: one batch (later ones would go in the next, after it).
      expect(statements).toHaveLength(1);
    } finally {
      counting.mockRestore();
    }
    const [{ delivered }] = await db.host.query<{ delivered: number }>(
      `SELECT count(*)::int AS delivered FROM webhook_deliveries WHERE status = 'delivered' AND attempts = 1`,
    );
    expect(delivered).toBe(ids.length);
  });
});
