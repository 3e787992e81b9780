import { Injectable } from '@nestjs/common';
import DataLoader from 'dataloader';
import {
  EventName,
  Page,
  PageRequest,
  pageFromRows,
  RecoveredDeliveries,
  recoveryBatch,
  RecoveryRequest,
  WebhookAttemptOutcome,
  WebhookAttemptTarget,
  WebhookDelivery,
  WebhookDeliveryRepository,
  WebhookQueueStats,
} from '@petstore/application';
import { listStatement } from '../../database/list-statement';
import { plannedEachRun, TransactionHost } from '../../database/transaction-host';

/*
 * Fixed SQL run straight on pg by the transaction host: rows map straight to deliveries. Several statements
 * (ON CONFLICT, guarded updates, arrays) are plain SQL anyway. The tables are the ones their migrations create.
 */
/** A delivery's columns (`webhook_deliveries d`), with its event's type (`webhook_events ev`). */
const COLUMNS = `d.id, d.event_id, ev.type, d.endpoint_id, d.status, d.attempts, d.last_status_code,
  d.last_error, d.next_attempt_at, d.created_at, d.delivered_at`;
// The partial indexes webhook_deliveries_pending_idx and webhook_endpoints_failing_idx keep it to the rows counted.
const QUEUE_STATS = `SELECT d.pending, d.retrying, d.due,
    (SELECT count(*)::int FROM webhook_endpoints
      WHERE failing_since IS NOT NULL AND disabled_at IS NULL) AS failing
  FROM (SELECT count(*)::int AS pending, (count(*) FILTER (WHERE attempts > 0))::int AS retrying,
               min(next_attempt_at) AS due
          FROM webhook_deliveries WHERE status = 'pending') d`;
/** One delivery per endpoint of `$2`, made at `$3` and due at `$4`; those that exist already are left alone. */
const CREATE_FOR = `INSERT INTO webhook_deliveries (event_id, endpoint_id, created_at, next_attempt_at)
  SELECT $1, endpoint_id, $3, $4 FROM unnest($2::bigint[]) AS endpoint_id
  ON CONFLICT (event_id, endpoint_id) DO NOTHING RETURNING id`;
/**
 * The event's place in the commit-order feed, as PgEventLog reads it (its transaction, 0 when its row of
 * `webhook_event_commits` is missing, and whether it is settled); none for a ping.
 */
const TARGET_COLUMNS = `${COLUMNS}, e.url, e.secret, e.previous_secret, e.previous_secret_expires_at,
    e.disabled_at IS NOT NULL AS disabled, e.failing_since IS NOT NULL AS failing, ev.body,
    ev.endpoint_id IS NULL AS in_feed, ev.seq, COALESCE(c.xact_id, '0'::xid8)::text AS xact,
    COALESCE(c.xact_id, '0'::xid8) < pg_snapshot_xmin(pg_current_snapshot()) AS settled`;
const TARGET_FROM = `webhook_deliveries d
  JOIN webhook_events ev ON ev.id = d.event_id
  JOIN webhook_endpoints e ON e.id = d.endpoint_id
  LEFT JOIN webhook_event_commits c ON c.seq = ev.seq`;
const FIND_TARGET = `SELECT ${TARGET_COLUMNS} FROM ${TARGET_FROM} WHERE d.id = $1`;
/** The targets of the deliveries `$1` (those that exist), for the attempts a worker begins together. */
const FIND_TARGETS = plannedEachRun(`SELECT ${TARGET_COLUMNS} FROM ${TARGET_FROM} WHERE d.id = ANY($1::bigint[])`);
/** Guarded by the attempts recorded before (`$3`) and the pending status: a rerun records nothing twice. */
const RECORD_ATTEMPT = `UPDATE webhook_deliveries
  SET attempts = $2, status = $4::varchar, last_status_code = $5, last_error = $6, next_attempt_at = $7,
      delivered_at = CASE WHEN $4::varchar = 'delivered' THEN $8::timestamptz END
  WHERE id = $1 AND attempts = $3 AND status = 'pending'`;
/**
 * RECORD_ATTEMPT for several deliveries (each at most once), one row each of the arrays; the ids recorded. Planned
 * at each run (plannedEachRun): its join to `unnest` is an index lookup per row only while the planner knows how
 * large the table is and how few the rows are.
 */
const RECORD_ATTEMPTS = plannedEachRun(`UPDATE webhook_deliveries d
  SET attempts = v.attempt, status = v.status, last_status_code = v.status_code, last_error = v.error,
      next_attempt_at = v.next_attempt_at, delivered_at = CASE WHEN v.status = 'delivered' THEN v.at END
  FROM unnest($1::bigint[], $2::int[], $3::int[], $4::varchar[], $5::int[], $6::varchar[], $7::timestamptz[],
              $8::timestamptz[]) AS v(id, attempt, previous_attempts, status, status_code, error, next_attempt_at, at)
  WHERE d.id = v.id AND d.attempts = v.previous_attempts AND d.status = 'pending'
  RETURNING d.id`);
const LOCK_FOR_REQUEUE = `SELECT status, next_attempt_at FROM webhook_deliveries
  WHERE id = $1 AND endpoint_id = $2 FOR UPDATE`;
const REQUEUE = `UPDATE webhook_deliveries d SET status = 'pending', next_attempt_at = $2
  FROM webhook_events ev WHERE d.id = $1 AND ev.id = d.event_id
  RETURNING ${COLUMNS}`;
/**
 * A recovery's batch, oldest first on webhook_deliveries_endpoint_created_idx, locked: the deliveries whose last
 * attempt failed (`failed`, or `pending` with a back-off still ahead of `$3`), `delivered` ones too with `$4`; never
 * a ping's.
 */
const LOCK_FOR_RECOVERY = `SELECT d.id, d.status, d.next_attempt_at, d.created_at
  FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
  WHERE d.endpoint_id = $1 AND d.created_at >= $2 AND ev.type <> 'ping'
    AND (d.status = 'failed' OR (d.status = 'pending' AND d.next_attempt_at > $3) OR ($4 AND d.status = 'delivered'))
  ORDER BY d.created_at, d.id LIMIT $5
  FOR UPDATE OF d`;
const RECOVER = `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $2 WHERE id = ANY($1::bigint[])`;
/** An endpoint's deliveries, newest first (listStatement): `$1` the endpoint, below an id. */
const LIST_SELECT = `SELECT ${COLUMNS} FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id`;
const LIST_ENDPOINT = 'd.endpoint_id = $1';
const LIST_BEFORE = (p: string) => `d.id < ${p}`;
const LIST_ORDER = (limit: string) => `ORDER BY d.id DESC LIMIT ${limit}`;

/** A row of `webhook_deliveries` with its event's type, as pg returns it (bigint as text). */
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

/** FIND_TARGET's row: the delivery, what its endpoint signs and sends with, and its event's body. */
interface TargetRow extends DeliveryRow {
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  disabled: boolean;
  failing: boolean;
  body: string;
  in_feed: boolean;
  seq: string;
  xact: string;
  settled: boolean;
}

const toDelivery = (row: DeliveryRow): WebhookDelivery => ({
  id: Number(row.id),
  eventId: row.event_id,
  type: row.type as EventName,
  endpointId: Number(row.endpoint_id),
  status: row.status,
  attempts: row.attempts,
  lastStatusCode: row.last_status_code,
  lastError: row.last_error,
  nextAttemptAt: row.next_attempt_at,
  createdAt: row.created_at,
  deliveredAt: row.delivered_at,
});

const toTarget = (row: TargetRow): WebhookAttemptTarget => ({
  delivery: toDelivery(row),
  url: row.url,
  secret: row.secret,
  previousSecret: row.previous_secret,
  previousSecretExpiresAt: row.previous_secret_expires_at,
  endpointDisabled: row.disabled,
  endpointFailing: row.failing,
  body: row.body,
  position: row.in_feed ? { xact: row.xact, seq: Number(row.seq) } : null,
  settled: !row.in_feed || row.settled,
});

@Injectable()
export class PgWebhookDeliveryRepository extends WebhookDeliveryRepository {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  async queueStats(): Promise<WebhookQueueStats> {
    const [row] = await this.host.query<{ pending: number; retrying: number; due: Date | null; failing: number }>(
      QUEUE_STATS,
    );
    return { pending: row.pending, retrying: row.retrying, earliestDueAt: row.due, failingEndpoints: row.failing };
  }

  async createFor(eventId: string, endpointIds: number[], now: Date, dueAt = now): Promise<number[]> {
    if (endpointIds.length === 0) return [];
    const rows = await this.host.query<{ id: string }>(CREATE_FOR, [eventId, endpointIds, now, dueAt]);
    return rows.map((row) => Number(row.id));
  }

  /**
   * Outside a transaction (a worker's attempt), the targets asked for together are read in one statement: a worker
   * begins the jobs of a fetch at once (up to a hundred), and one statement per job was a third of the database's
   * work per delivery. Inside one, on the transaction's connection, alone.
   */
  async findTarget(deliveryId: number): Promise<WebhookAttemptTarget | null> {
    if (this.host.inTransaction) {
      const [row] = await this.host.query<TargetRow>(FIND_TARGET, [deliveryId]);
      return row ? toTarget(row) : null;
    }
    return this.targets.load(deliveryId);
  }

  /**
   * Outside a transaction (a worker's attempt that needs nothing else written), the outcomes that come while a batch
   * is being written go together in the next one (a group commit: never a wait of its own, only the batch before it),
   * each guarded as alone. Inside one, on the transaction's connection, alone.
   */
  async recordAttempt(o: WebhookAttemptOutcome): Promise<boolean> {
    if (this.host.inTransaction) {
      const { affected } = await this.host.execute(RECORD_ATTEMPT, [
        o.deliveryId,
        o.attempt,
        o.previousAttempts,
        o.status,
        o.statusCode,
        o.error?.slice(0, 1000) ?? null,
        o.nextAttemptAt,
        o.at,
      ]);
      return affected > 0;
    }
    return this.outcomes.load(o);
  }

  /** The targets of a batch of findTarget calls, by id, in their order (null: no such delivery). */
  private readonly targets = new DataLoader<number, WebhookAttemptTarget | null>(
    async (ids) => {
      const rows = await this.host.query<TargetRow>(FIND_TARGETS, [[...new Set(ids)]]);
      const byId = new Map(rows.map((row) => [Number(row.id), toTarget(row)]));
      return ids.map((id) => byId.get(id) ?? null);
    },
    { cache: false, maxBatchSize: 100 },
  );

  /** The batch of outcomes being written: the next batch waits for it (group commit). */
  private writing: Promise<unknown> = Promise.resolve();

  /** Whether each outcome of a batch was recorded. */
  private readonly outcomes = new DataLoader<WebhookAttemptOutcome, boolean>(
    (batch) => {
      const written = this.recordBatch(batch);
      this.writing = written.catch(() => undefined);
      return written;
    },
    {
      cache: false,
      maxBatchSize: 500,
      // After the batch being written: what came meanwhile goes in one statement, at once if nothing is written.
      batchScheduleFn: (write) => void this.writing.then(() => setImmediate(write)),
    },
  );

  private async recordBatch(batch: readonly WebhookAttemptOutcome[]): Promise<boolean[]> {
    // A delivery twice in one batch (a job run again while its first run records): one statement could not say which
    // of the two it recorded, so the later ones are recorded after the rest, each alone, as before.
    const seen = new Set<number>();
    const first = batch.filter((o) => !seen.has(o.deliveryId) && seen.add(o.deliveryId));
    const together = new Set(first);
    const rows = await this.host.query<{ id: string }>(RECORD_ATTEMPTS, [
      first.map((o) => o.deliveryId),
      first.map((o) => o.attempt),
      first.map((o) => o.previousAttempts),
      first.map((o) => o.status),
      first.map((o) => o.statusCode),
      first.map((o) => o.error?.slice(0, 1000) ?? null),
      first.map((o) => o.nextAttemptAt),
      first.map((o) => o.at),
    ]);
    const recorded = new Set(rows.map((row) => Number(row.id)));
    const results: boolean[] = [];
    for (const o of batch) {
      if (together.has(o)) results.push(recorded.has(o.deliveryId));
      else results.push(await this.host.transaction(() => this.recordAttempt(o)));
    }
    return results;
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
    this.host.requireTransaction('requeue');
    const [current] = await this.host.query<{ status: string; next_attempt_at: Date | null }>(LOCK_FOR_REQUEUE, [
      deliveryId,
      endpointId,
    ]);
    if (!current) return 'not_found';
    const at = now();
    if (current.status === 'pending' && (current.next_attempt_at === null || current.next_attempt_at <= at)) {
      return 'pending';
    }
    const [row] = await this.host.query<DeliveryRow>(REQUEUE, [deliveryId, at]);
    return toDelivery(row);
  }

  /**
   * Two statements in the caller's transaction: the batch locked (one row more than `limit`, which says whether more
   * is left), then the deliveries still to recover, by `now()` read once the locks are held, made due. A delivery made
   * due meanwhile by another transaction is seen as it is now, and left alone.
   */
  async recoverSince(
    { endpointId, since, all, limit }: RecoveryRequest,
    now: () => Date,
  ): Promise<RecoveredDeliveries> {
    this.host.requireTransaction('recoverSince');
    const rows = await this.host.query<{ id: string; status: string; next_attempt_at: Date | null; created_at: Date }>(
      LOCK_FOR_RECOVERY,
      [endpointId, since, now(), all, limit + 1],
    );
    const { batch, nextSince } = recoveryBatch(rows, limit, (row) => row.created_at);
    const at = now();
    const due = batch.filter(
      (row) =>
        row.status === 'failed' ||
        (row.status === 'pending' && row.next_attempt_at !== null && row.next_attempt_at > at) ||
        (all && row.status === 'delivered'),
    );
    if (due.length) await this.host.execute(RECOVER, [due.map((row) => row.id), at]);
    return { requeued: due.map((row) => ({ id: Number(row.id), nextAttemptAt: at })), nextSince };
  }

  async listForEndpoint(endpointId: number, { limit, afterId }: PageRequest): Promise<Page<WebhookDelivery>> {
    const { text, params } = listStatement({
      select: LIST_SELECT,
      always: { sql: LIST_ENDPOINT, values: [endpointId] },
      conditions: [[afterId, LIST_BEFORE]],
      order: LIST_ORDER,
      limit: limit + 1,
    });
    const rows = await this.host.query<DeliveryRow>(text, params);
    return pageFromRows(rows.map(toDelivery), limit, (delivery) => delivery.id);
  }
}
