import { Injectable } from '@nestjs/common';
import {
  EventLog,
  EventLogQuery,
  EVERY_ACCOUNT,
  LoggedEvent,
  Page,
  PageRequest,
  pageFromRows,
} from '@petstore/application';
import { WebhookEventType } from '@petstore/domain';
import { TransactionHost } from '../../database/transaction-host';

/*
 * Fixed SQL run straight on pg by the transaction host: rows map straight to logged events. `endpoint_id IS NULL`
 * (no pings) is in every list so that the partial indexes serve it: by `seq` for an administrator, by
 * (subject_owner_id, seq) for a customer (its own events, and every account's, EVERY_ACCOUNT: below).
 */
const COLUMNS = `id, type, subject_owner_id, body, created_at, seq`;
/** Each filter is `$n IS NULL` (absent) or its condition; `$1` the `seq` to continue below, `$6` the rows to read. */
const LIST = `SELECT ${COLUMNS} FROM webhook_events
  WHERE endpoint_id IS NULL
    AND ($1::bigint IS NULL OR seq < $1)
    AND ($2::bigint IS NULL OR subject_owner_id = $2)
    AND ($3::text[] IS NULL OR type = ANY ($3))
    AND ($4::timestamptz IS NULL OR created_at >= $4)
    AND ($5::timestamptz IS NULL OR created_at < $5)
  ORDER BY seq DESC LIMIT $6`;
/** LIST's filters but the owner's, for the two branches of LIST_FOR_ACCOUNT. */
const FILTERS = `endpoint_id IS NULL
      AND ($1::bigint IS NULL OR seq < $1)
      AND ($3::text[] IS NULL OR type = ANY ($3))
      AND ($4::timestamptz IS NULL OR created_at >= $4)
      AND ($5::timestamptz IS NULL OR created_at < $5)`;
/**
 * A customer's page: its own events (`$2`) and every account's (`$7`, EVERY_ACCOUNT: the catalogue's), newest first.
 * Two branches, each read newest first through (subject_owner_id, seq) and cut at the page's size, then merged: an
 * OR of the two owners would read every event of both to sort them (the catalogue's are many).
 */
const LIST_FOR_ACCOUNT = `SELECT ${COLUMNS} FROM (
    (SELECT ${COLUMNS} FROM webhook_events WHERE subject_owner_id = $2 AND ${FILTERS} ORDER BY seq DESC LIMIT $6)
    UNION ALL
    (SELECT ${COLUMNS} FROM webhook_events WHERE subject_owner_id = $7 AND ${FILTERS} ORDER BY seq DESC LIMIT $6)
  ) AS visible
  ORDER BY seq DESC LIMIT $6`;
const FIND_BY_ID = `SELECT ${COLUMNS} FROM webhook_events WHERE id = $1 AND endpoint_id IS NULL`;
/**
 * The oldest events first, through the BRIN index on created_at (a bitmap scan: the ranges before `$1`); their
 * deliveries go with them (ON DELETE CASCADE, through the deliveries' (event_id, endpoint_id) index).
 */
const PURGE_BATCH = `DELETE FROM webhook_events WHERE ctid = ANY (ARRAY(
  SELECT ctid FROM webhook_events WHERE created_at < $1 LIMIT $2))`;

/** A listed row of `webhook_events` as pg returns it (bigint as text): never a ping. */
interface LoggedEventRow {
  id: string;
  type: WebhookEventType;
  subject_owner_id: string | null;
  body: string;
  created_at: Date;
  seq: string;
}

const toLoggedEvent = (row: LoggedEventRow): LoggedEvent => ({
  id: row.id,
  type: row.type,
  subjectOwnerId: row.subject_owner_id === null ? null : Number(row.subject_owner_id),
  endpointId: null,
  body: row.body,
  createdAt: row.created_at,
  seq: Number(row.seq),
});

/** The event log: the outbox's table read newest first, and purged after the retention period. */
@Injectable()
export class PgEventLog extends EventLog {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  async list(query: EventLogQuery, { limit, afterId }: PageRequest): Promise<Page<LoggedEvent>> {
    const params = [
      afterId ?? null,
      query.subjectOwnerId ?? null,
      query.types?.length ? query.types : null,
      query.createdAfter ?? null,
      query.createdBefore ?? null,
      limit + 1,
    ];
    const rows =
      query.subjectOwnerId === undefined
        ? await this.host.query<LoggedEventRow>(LIST, params)
        : await this.host.query<LoggedEventRow>(LIST_FOR_ACCOUNT, [...params, EVERY_ACCOUNT]);
    return pageFromRows(rows.map(toLoggedEvent), limit, (event) => event.seq);
  }

  async findById(id: string): Promise<LoggedEvent | null> {
    const [row] = await this.host.query<LoggedEventRow>(FIND_BY_ID, [id]);
    return row ? toLoggedEvent(row) : null;
  }

  async purgeBatch(before: Date, limit: number): Promise<number> {
    const { affected } = await this.host.execute(PURGE_BATCH, [before, limit]);
    return affected;
  }
}
