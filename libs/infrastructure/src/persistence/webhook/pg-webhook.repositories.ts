import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import {
  EventLog,
  EventLogQuery,
  LoggedEvent,
  Page,
  PageRequest,
  pageFromRows,
  WebhookAttemptOutcome,
  WebhookAttemptTarget,
  WebhookDelivery,
  WebhookDeliveryQueue,
  WebhookDeliveryRepository,
  WebhookEndpointRepository,
  WebhookEvent,
  WebhookEventName,
  WebhookOutboxStore,
  WebhookQueueStats,
  WebhookSubscriber,
} from '@petstore/application';
import { WebhookEndpoint, WebhookEventType } from '@petstore/domain';
import { nextSequenceId } from '../../database/next-id';
import { heldWrite } from '../../database/session/held-write';
import { TransactionHost } from '../../database/transaction-host';
import { PgBossJobQueue } from '../../jobs/pg-boss-job-queue';

/*
 * The webhook tables are read and written with plain SQL: the statements are few, and several
 * (ON CONFLICT, guarded updates, arrays) are plain SQL anyway.
 */

/** The outbox's fan-out jobs (one per event; the job's id is the event's). */
export const WEBHOOK_FAN_OUT_QUEUE = 'webhook-fan-out';
/** One job per attempt of a delivery. */
export const WEBHOOK_DELIVERY_QUEUE = 'webhook-delivery';
/** A delivery job's data: `due` (ISO 8601) is the delivery's `next_attempt_at` it is for (absent: any, older jobs). */
export interface WebhookDeliveryJob {
  deliveryId: number;
  due?: string;
}

interface EndpointRow {
  id: string;
  owner_id: string;
  url: string;
  events: string[];
  secret: string;
  created_at: Date;
  disabled_at: Date | null;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  owner_is_admin?: boolean;
}

function toEndpoint(row: EndpointRow): WebhookEndpoint {
  return WebhookEndpoint.restore({
    id: Number(row.id),
    ownerId: Number(row.owner_id),
    url: row.url,
    events: row.events as WebhookEventType[],
    secret: row.secret,
    createdAt: row.created_at,
    disabledAt: row.disabled_at,
    previousSecret: row.previous_secret,
    previousSecretExpiresAt: row.previous_secret_expires_at,
  });
}

@Injectable()
export class PgWebhookEndpointRepository extends WebhookEndpointRepository {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  private query<T>(text: string, values: unknown[] = []): Promise<T[]> {
    return this.host.query<T>(text, values);
  }

  async lockOwner(ownerId: number): Promise<void> {
    await this.query<unknown>(`SELECT id FROM accounts WHERE id = $1 FOR UPDATE`, [ownerId]);
  }

  async countByOwner(ownerId: number): Promise<number> {
    const [row] = await this.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_endpoints WHERE owner_id = $1`,
      [ownerId],
    );
    return row.n;
  }

  nextId(): Promise<number> {
    return nextSequenceId(this.host, 'webhook_endpoints');
  }

  async add(endpoint: WebhookEndpoint): Promise<void> {
    const e = endpoint.toSnapshot();
    await this.query<unknown>(
      `INSERT INTO webhook_endpoints (id, owner_id, url, events, secret, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
      [e.id, e.ownerId, e.url, e.events, e.secret, e.createdAt],
    );
  }

  async findById(id: number): Promise<WebhookEndpoint | null> {
    const [row] = await this.query<EndpointRow>(`SELECT * FROM webhook_endpoints WHERE id = $1`, [id]);
    return row ? toEndpoint(row) : null;
  }

  async lockById(id: number): Promise<WebhookEndpoint | null> {
    if (!this.host.inTransaction) throw new Error('lockById needs a transaction (UnitOfWork.run).');
    const [row] = await this.query<EndpointRow>(`SELECT * FROM webhook_endpoints WHERE id = $1 FOR UPDATE`, [id]);
    return row ? toEndpoint(row) : null;
  }

  async lockWithOwner(id: number): Promise<WebhookSubscriber | null> {
    if (!this.host.inTransaction) throw new Error('lockWithOwner needs a transaction (UnitOfWork.run).');
    const [row] = await this.query<EndpointRow>(
      `SELECT e.*, a.role = 'admin' AS owner_is_admin
         FROM webhook_endpoints e JOIN accounts a ON a.id = e.owner_id
        WHERE e.id = $1 FOR UPDATE OF e`,
      [id],
    );
    return row ? { endpoint: toEndpoint(row), ownerIsAdmin: row.owner_is_admin === true } : null;
  }

  async update(endpoint: WebhookEndpoint, { resetHealth }: { resetHealth: boolean }): Promise<void> {
    const e = endpoint.toSnapshot();
    await this.query<unknown>(
      `UPDATE webhook_endpoints
          SET url = $2, events = $3, secret = $4, previous_secret = $5, previous_secret_expires_at = $6,
              disabled_at = $7, failing_since = CASE WHEN $8 THEN NULL ELSE failing_since END
        WHERE id = $1`,
      [e.id, e.url, e.events, e.secret, e.previousSecret, e.previousSecretExpiresAt, e.disabledAt, resetHealth],
    );
  }

  async listByOwner(ownerId: number, { limit, afterId }: PageRequest): Promise<Page<WebhookEndpoint>> {
    const rows = await this.query<EndpointRow>(
      `SELECT * FROM webhook_endpoints WHERE owner_id = $1 AND id > $2 ORDER BY id LIMIT $3`,
      [ownerId, afterId ?? 0, limit + 1],
    );
    const page = pageFromRows(rows.map(toEndpoint), limit, (endpoint) => endpoint.id);
    return page;
  }

  async delete(id: number): Promise<void> {
    await this.query<unknown>(`DELETE FROM webhook_endpoints WHERE id = $1`, [id]);
  }

  async findSubscribers(type: WebhookEventType, subjectOwnerId: number | null): Promise<WebhookSubscriber[]> {
    const rows = await this.query<EndpointRow>(
      `SELECT e.*, a.role = 'admin' AS owner_is_admin
         FROM webhook_endpoints e JOIN accounts a ON a.id = e.owner_id
        WHERE $1 = ANY (e.events) AND e.disabled_at IS NULL AND (e.owner_id = $2 OR a.role = 'admin')
        ORDER BY e.id`,
      [type, subjectOwnerId],
    );
    return rows.map((row) => ({ endpoint: toEndpoint(row), ownerIsAdmin: row.owner_is_admin === true }));
  }

  async hasSubscribers(type: WebhookEventType, subjectOwnerId: number | null): Promise<boolean> {
    const [row] = await this.query<{ found: boolean }>(
      `SELECT EXISTS (
         SELECT 1 FROM webhook_endpoints e JOIN accounts a ON a.id = e.owner_id
          WHERE $1 = ANY (e.events) AND e.disabled_at IS NULL AND (e.owner_id = $2 OR a.role = 'admin')) AS found`,
      [type, subjectOwnerId],
    );
    return row.found;
  }

  async recordHealth(endpointId: number, delivered: boolean, at: Date): Promise<void> {
    await this.query<unknown>(
      delivered
        ? `UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL`
        : `UPDATE webhook_endpoints SET failing_since = $2 WHERE id = $1 AND failing_since IS NULL`,
      delivered ? [endpointId] : [endpointId, at],
    );
  }

  async disableFailingSince(since: Date, now: Date): Promise<number> {
    const { affected: count } = await this.host.execute(
      `UPDATE webhook_endpoints SET disabled_at = $2 WHERE disabled_at IS NULL AND failing_since <= $1`,
      [since, now],
    );
    return count;
  }
}

interface DeliveryRow {
  id: string;
  event_id: string;
  type: string;
  endpoint_id: string;
  status: WebhookDelivery['status'];
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: Date | null;
  created_at: Date;
  delivered_at: Date | null;
}

function toDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    id: Number(row.id),
    eventId: row.event_id,
    type: row.type as WebhookEventName,
    endpointId: Number(row.endpoint_id),
    status: row.status,
    attempts: row.attempts,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    nextAttemptAt: row.next_attempt_at,
    createdAt: row.created_at,
    deliveredAt: row.delivered_at,
  };
}

const DELIVERY_COLUMNS = `d.id, d.event_id, ev.type, d.endpoint_id, d.status, d.attempts, d.last_status_code,
  d.last_error, d.next_attempt_at, d.created_at, d.delivered_at`;

@Injectable()
export class PgWebhookDeliveryRepository extends WebhookDeliveryRepository {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  private query<T>(text: string, values: unknown[] = []): Promise<T[]> {
    return this.host.query<T>(text, values);
  }

  // The partial indexes webhook_deliveries_pending_idx and webhook_endpoints_failing_idx keep it to the rows counted.
  async queueStats(): Promise<WebhookQueueStats> {
    const [row] = await this.query<{ pending: number; retrying: number; due: Date | null; failing: number }>(
      `SELECT d.pending, d.retrying, d.due,
              (SELECT count(*)::int FROM webhook_endpoints
                WHERE failing_since IS NOT NULL AND disabled_at IS NULL) AS failing
         FROM (SELECT count(*)::int AS pending, (count(*) FILTER (WHERE attempts > 0))::int AS retrying,
                      min(next_attempt_at) AS due
                 FROM webhook_deliveries WHERE status = 'pending') d`,
    );
    return { pending: row.pending, retrying: row.retrying, earliestDueAt: row.due, failingEndpoints: row.failing };
  }

  async createFor(eventId: string, endpointIds: number[], now: Date): Promise<number[]> {
    if (endpointIds.length === 0) return [];
    const rows = await this.query<{ id: string }>(
      `INSERT INTO webhook_deliveries (event_id, endpoint_id, created_at, next_attempt_at)
       SELECT $1, endpoint_id, $3, $3 FROM unnest($2::bigint[]) AS endpoint_id
       ON CONFLICT (event_id, endpoint_id) DO NOTHING RETURNING id`,
      [eventId, endpointIds, now],
    );
    return rows.map((row) => Number(row.id));
  }

  async findTarget(deliveryId: number): Promise<WebhookAttemptTarget | null> {
    type TargetRow = DeliveryRow &
      Pick<EndpointRow, 'url' | 'secret' | 'previous_secret' | 'previous_secret_expires_at'> & {
        disabled: boolean;
        body: string;
      };
    const [row] = await this.query<TargetRow>(
      `SELECT ${DELIVERY_COLUMNS}, e.url, e.secret, e.previous_secret, e.previous_secret_expires_at,
              e.disabled_at IS NOT NULL AS disabled, ev.body
         FROM webhook_deliveries d
         JOIN webhook_events ev ON ev.id = d.event_id
         JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.id = $1`,
      [deliveryId],
    );
    if (!row) return null;
    return {
      delivery: toDelivery(row),
      url: row.url,
      secret: row.secret,
      previousSecret: row.previous_secret,
      previousSecretExpiresAt: row.previous_secret_expires_at,
      endpointDisabled: row.disabled,
      body: row.body,
    };
  }

  async recordAttempt(o: WebhookAttemptOutcome): Promise<boolean> {
    const { affected: count } = await this.host.execute(
      `UPDATE webhook_deliveries
          SET attempts = $2, status = $4::varchar, last_status_code = $5, last_error = $6, next_attempt_at = $7,
              delivered_at = CASE WHEN $4::varchar = 'delivered' THEN $8::timestamptz END
        WHERE id = $1 AND attempts = $3 AND status = 'pending'`,
      [
        o.deliveryId,
        o.attempt,
        o.previousAttempts,
        o.status,
        o.statusCode,
        o.error?.slice(0, 1000) ?? null,
        o.nextAttemptAt,
        o.at,
      ],
    );
    return count > 0;
  }

  /**
   * Under the delivery's row lock (the caller's transaction), `now()` read once it is held: of two requeues at once,
   * the second finds the attempt the first made due.
   */
  async requeue(
    endpointId: number,
    deliveryId: number,
    now: () => Date,
  ): Promise<WebhookDelivery | 'pending' | 'not_found'> {
    const [current] = await this.query<{ status: string; next_attempt_at: Date | null }>(
      `SELECT status, next_attempt_at FROM webhook_deliveries WHERE id = $1 AND endpoint_id = $2 FOR UPDATE`,
      [deliveryId, endpointId],
    );
    if (!current) return 'not_found';
    const at = now();
    if (current.status === 'pending' && (current.next_attempt_at === null || current.next_attempt_at <= at)) {
      return 'pending';
    }
    const [row] = await this.query<DeliveryRow>(
      `UPDATE webhook_deliveries d SET status = 'pending', next_attempt_at = $2
         FROM webhook_events ev WHERE d.id = $1 AND ev.id = d.event_id
       RETURNING ${DELIVERY_COLUMNS}`,
      [deliveryId, at],
    );
    return toDelivery(row);
  }

  async listForEndpoint(endpointId: number, { limit, afterId }: PageRequest): Promise<Page<WebhookDelivery>> {
    const rows = await this.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
        WHERE d.endpoint_id = $1 AND ($2::bigint IS NULL OR d.id < $2) ORDER BY d.id DESC LIMIT $3`,
      [endpointId, afterId ?? null, limit + 1],
    );
    return pageFromRows(rows.map(toDelivery), limit, (delivery) => delivery.id);
  }
}

/** An event of the outbox, held (TransactionHost.hold). */
const INSERT_EVENT = heldWrite({
  verb: 'insert',
  table: 'webhook_events',
  params: 6,
  sql: (p) => `INSERT INTO webhook_events (id, type, subject_owner_id, endpoint_id, body, created_at)
       VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)})`,
});

/** The outbox table; each event's fan-out job is sent on the same transaction. */
@Injectable()
export class PgWebhookOutboxStore extends WebhookOutboxStore {
  constructor(
    private readonly host: TransactionHost,
    private readonly jobs: PgBossJobQueue,
  ) {
    super();
  }

  nextId(): string {
    return randomUUID();
  }

  /**
   * One INSERT for every event, held (TransactionHost.hold: sent with the change's own writes, in one statement, at
   * the commit; its id is a new UUID and it references nothing, so it cannot fail but by a bug); the fan-out job (a
   * second statement) only for an event some endpoint may receive.
   */
  async add(event: WebhookEvent, fanOut: boolean): Promise<void> {
    if (!this.host.inTransaction) throw new Error('A webhook event must be recorded inside UnitOfWork.run.');
    await this.host.hold(INSERT_EVENT, [
      event.id,
      event.type,
      event.subjectOwnerId,
      event.endpointId,
      event.body,
      event.createdAt,
    ]);
    if (fanOut) await this.jobs.sendInTransaction(this.host, WEBHOOK_FAN_OUT_QUEUE, { eventId: event.id }, event.id);
  }

  async findById(id: string): Promise<WebhookEvent | null> {
    const [row] = await this.host.query<EventRow>(`SELECT * FROM webhook_events WHERE id = $1`, [id]);
    if (!row) return null;
    return {
      id: row.id,
      type: row.type,
      subjectOwnerId: row.subject_owner_id === null ? null : Number(row.subject_owner_id),
      endpointId: row.endpoint_id === null ? null : Number(row.endpoint_id),
      body: row.body,
      createdAt: row.created_at,
    };
  }
}

/** A row of webhook_events (bigint ids as pg gives them: text). */
interface EventRow {
  id: string;
  type: WebhookEvent['type'];
  subject_owner_id: string | null;
  endpoint_id: string | null;
  body: string;
  created_at: Date;
  seq: string;
}

function toLoggedEvent(row: EventRow): LoggedEvent {
  return {
    id: row.id,
    type: row.type as LoggedEvent['type'],
    subjectOwnerId: row.subject_owner_id === null ? null : Number(row.subject_owner_id),
    endpointId: null,
    body: row.body,
    createdAt: row.created_at,
    seq: Number(row.seq),
  };
}

/**
 * The event log: the outbox's table read newest first. `endpoint_id IS NULL` (no pings) is in every list so
 * that the partial indexes serve it: by `seq` for an administrator, by (subject_owner_id, seq) for a customer.
 */
@Injectable()
export class PgEventLog extends EventLog {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  async list(query: EventLogQuery, { limit, afterId }: PageRequest): Promise<Page<LoggedEvent>> {
    const rows = await this.host.query<EventRow>(
      `SELECT * FROM webhook_events
        WHERE endpoint_id IS NULL
          AND ($1::bigint IS NULL OR seq < $1)
          AND ($2::bigint IS NULL OR subject_owner_id = $2)
          AND ($3::text[] IS NULL OR type = ANY ($3))
          AND ($4::timestamptz IS NULL OR created_at >= $4)
          AND ($5::timestamptz IS NULL OR created_at < $5)
        ORDER BY seq DESC LIMIT $6`,
      [
        afterId ?? null,
        query.subjectOwnerId ?? null,
        query.types?.length ? query.types : null,
        query.createdAfter ?? null,
        query.createdBefore ?? null,
        limit + 1,
      ],
    );
    return pageFromRows(rows.map(toLoggedEvent), limit, (event) => event.seq);
  }

  async findById(id: string): Promise<LoggedEvent | null> {
    const [row] = await this.host.query<EventRow>(
      `SELECT * FROM webhook_events WHERE id = $1 AND endpoint_id IS NULL`,
      [id],
    );
    return row ? toLoggedEvent(row) : null;
  }

  /**
   * The oldest events first, through the BRIN index on created_at (a bitmap scan: the ranges before `before`);
   * their deliveries go with them (ON DELETE CASCADE, through the deliveries' (event_id, endpoint_id) index).
   */
  async purgeBatch(before: Date, limit: number): Promise<number> {
    const { affected } = await this.host.execute(
      `DELETE FROM webhook_events WHERE ctid = ANY (ARRAY(
         SELECT ctid FROM webhook_events WHERE created_at < $1 LIMIT $2))`,
      [before, limit],
    );
    return affected;
  }
}

/** A delivery's attempt jobs, sent in the transaction that records why one is due. */
@Injectable()
export class PgBossWebhookDeliveryQueue extends WebhookDeliveryQueue {
  constructor(
    private readonly host: TransactionHost,
    private readonly jobs: PgBossJobQueue,
  ) {
    super();
  }

  schedule(deliveryId: number, at: Date | null, due?: Date): Promise<void> {
    const options = at ? { startAfter: at } : {};
    const data: WebhookDeliveryJob = due ? { deliveryId, due: due.toISOString() } : { deliveryId };
    return this.jobs.sendInTransaction(this.host, WEBHOOK_DELIVERY_QUEUE, data, randomUUID(), options);
  }
}
