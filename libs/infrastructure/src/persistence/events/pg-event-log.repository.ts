import { Injectable } from '@nestjs/common';
import {
  EventLog,
  EventLogQuery,
  EVERY_ACCOUNT,
  FeedPage,
  FeedPosition,
  FeedRequest,
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
 * (subject_owner_id, seq) for a customer; in commit order by (xact, seq) and (subject_owner_id, xact, seq).
 *
 * Commit order: `xact_id` is the writing transaction's id (its column default, pg_current_xact_id()); the rows
 * written before the column existed are NULL, read as transaction 0 (the oldest) by the expression XACT, which the
 * commit-order indexes are built on. An event is settled when its transaction is older than the oldest transaction
 * still in progress (`pg_snapshot_xmin` of the statement's own snapshot): every older one has ended, so no event can
 * appear before it any more. The feed lists settled events only: a position it hands out is final.
 *
 * A customer sees its own events and every account's (EVERY_ACCOUNT: the catalogue's). Each list is then two
 * branches, one per owner, each read in the list's order through its index and cut at the page's size, then merged:
 * an OR of the two owners would read every event of both to sort them (the catalogue's are many).
 */
const XACT = `COALESCE(xact_id, '0'::xid8)`;
const SETTLED = `${XACT} < pg_snapshot_xmin(pg_current_snapshot())`;
const COLUMNS = `id, type, subject_owner_id, body, created_at, seq, ${XACT}::text AS xact, ${SETTLED} AS settled`;
/** The same columns read back from a derived table of them (never `*`: sql-star.spec.ts). */
const LISTED = 'id, type, subject_owner_id, body, created_at, seq, xact, settled';
/** The filters of every list but the owner's: `$2` the types, `$3` created at or after, `$4` created before. */
const DATE_FILTERS = `($3::timestamptz IS NULL OR created_at >= $3) AND ($4::timestamptz IS NULL OR created_at < $4)`;
const FILTERS = `($2::text[] IS NULL OR type = ANY ($2)) AND ${DATE_FILTERS}`;

/** One list: its own condition, its order (on the table, and on the merged branches' columns), its limit parameter. */
interface ListShape {
  where: string;
  order: string;
  mergedOrder: string;
  limit: string;
}

/** Every account's events, or (`$1` set) one account's only: the administrator's lists. */
const anyOwner = ({ where, order, limit }: ListShape): string => `SELECT ${COLUMNS} FROM webhook_events
  WHERE endpoint_id IS NULL AND ($1::bigint IS NULL OR subject_owner_id = $1) AND ${FILTERS} AND ${where}
  ORDER BY ${order} LIMIT ${limit}`;

/** A customer's: the account `$1`'s events and EVERY_ACCOUNT's (the parameter after the limit). */
function ownAndEveryAccount({ where, order, mergedOrder, limit }: ListShape): string {
  const everyAccount = `$${Number(limit.slice(1)) + 1}`;
  const branch = (owner: string) => `(SELECT ${COLUMNS}, ${XACT} AS xact_order FROM webhook_events
    WHERE endpoint_id IS NULL AND subject_owner_id = ${owner} AND ${FILTERS} AND ${where}
    ORDER BY ${order} LIMIT ${limit})`;
  return `SELECT ${LISTED} FROM (${branch('$1')} UNION ALL ${branch(everyAccount)}) AS visible
  ORDER BY ${mergedOrder} LIMIT ${limit}`;
}

/** Newest first: `$5` the `seq` to continue below, `$6` the rows to read. */
const NEWEST_FIRST: ListShape = {
  where: '($5::bigint IS NULL OR seq < $5)',
  order: 'seq DESC',
  mergedOrder: 'seq DESC',
  limit: '$6',
};
/** The feed from its start: the oldest settled events; `$5` the rows to read. */
const FEED_FROM_START: ListShape = {
  where: SETTLED,
  order: `${XACT}, seq`,
  mergedOrder: 'xact_order, seq',
  limit: '$5',
};
/** The feed after a position (`$5` its transaction, `$6` its seq), oldest first; `$7` the rows to read. */
const FEED_AFTER: ListShape = {
  where: `${SETTLED} AND (${XACT}, seq) > ($5::xid8, $6::bigint)`,
  order: `${XACT}, seq`,
  mergedOrder: 'xact_order, seq',
  limit: '$7',
};
/** The feed before a position (`$5` its transaction, `$6` its seq), nearest first; `$7` the rows to read. */
const FEED_BEFORE: ListShape = {
  where: `${SETTLED} AND (${XACT}, seq) < ($5::xid8, $6::bigint)`,
  order: `${XACT} DESC, seq DESC`,
  mergedOrder: 'xact_order DESC, seq DESC',
  limit: '$7',
};

/** The largest bigint: `seq < COALESCE($n, it)` bounds an index scan under a generic plan too (an OR would not). */
const MAX_BIGINT = '9223372036854775807';
/**
 * An administrator's newest-first list of some types (`$2`): one index scan per type asked for, on (type, seq) (each
 * already in the list's order and cut at the page's size), then merged. In the one statement above, `type = ANY ($2)`
 * is a filter on the walk of every event by `seq`: a rare type read 10,000 events per one listed. A common type costs
 * the same here as there: the page's rows, once per type.
 *
 * The type is matched as `type >= wanted AND type <= wanted` (equal, in a deterministic collation) and the order is
 * (type, seq), which only that index gives without a sort: with `type = wanted` the planner drops `type` from the
 * order as constant, and then it estimates a type at 1/(distinct types) and, with few types or wide rows, walks `seq`
 * with a filter again (the rare type's 4 s). The plan must not depend on which types are asked for: the statement is
 * prepared once, and the lateral's type is not known when it is planned. `seq < COALESCE(…)` bounds the scan from
 * the cursor under a generic plan too (`$5 IS NULL OR seq < $5` would be a filter). pg-event-log.repository.spec.ts
 * checks the plan.
 */
const NEWEST_FIRST_OF_TYPES = `SELECT ${LISTED.split(', ')
  .map((column) => `listed.${column}`)
  .join(', ')} FROM (SELECT DISTINCT wanted FROM unnest($2::text[]) AS wanted) AS types,
  LATERAL (SELECT ${COLUMNS} FROM webhook_events
    WHERE endpoint_id IS NULL AND type >= types.wanted AND type <= types.wanted
      AND seq < COALESCE($5::bigint, ${MAX_BIGINT}) AND ($1::bigint IS NULL OR subject_owner_id = $1)
      AND ${DATE_FILTERS}
    ORDER BY type DESC, seq DESC LIMIT $6) AS listed
  ORDER BY seq DESC LIMIT $6`;

/** Each list's statement for an administrator and for a customer. */
const STATEMENTS = new Map(
  [NEWEST_FIRST, FEED_FROM_START, FEED_AFTER, FEED_BEFORE].map((shape) => [
    shape,
    { anyOwner: anyOwner(shape), ownAndEveryAccount: ownAndEveryAccount(shape) },
  ]),
);
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
  /** The writing transaction's id (xid8 as text; 0 for the rows written before it was recorded). */
  xact: string;
  settled: boolean;
}

const toLoggedEvent = (row: LoggedEventRow): LoggedEvent => ({
  id: row.id,
  type: row.type,
  subjectOwnerId: row.subject_owner_id === null ? null : Number(row.subject_owner_id),
  endpointId: null,
  body: row.body,
  createdAt: row.created_at,
  seq: Number(row.seq),
  position: row.settled ? { xact: row.xact, seq: Number(row.seq) } : null,
});

/** A feed row: settled by the statement's condition, so it has its position. */
const toFeedEvent = (row: LoggedEventRow): LoggedEvent & { position: FeedPosition } => ({
  ...toLoggedEvent(row),
  position: { xact: row.xact, seq: Number(row.seq) },
});

const filterParams = (query: EventLogQuery): unknown[] => [
  query.subjectOwnerId ?? null,
  query.types?.length ? query.types : null,
  query.createdAfter ?? null,
  query.createdBefore ?? null,
];

/** The event log: the outbox's table read newest first, and purged after the retention period. */
@Injectable()
export class PgEventLog extends EventLog {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  async list(query: EventLogQuery, { limit, afterId }: PageRequest): Promise<Page<LoggedEvent>> {
    const own = [afterId ?? null, limit + 1];
    const rows =
      query.types?.length && query.subjectOwnerId === undefined
        ? await this.host.query<LoggedEventRow>(NEWEST_FIRST_OF_TYPES, [...filterParams(query), ...own])
        : await this.select(NEWEST_FIRST, query, own);
    return pageFromRows(rows.map(toLoggedEvent), limit, (event) => event.seq);
  }

  /** One statement per direction (not `$n IS NULL OR …`), so that each plan reads its index from the position on. */
  async feed(query: EventLogQuery, { limit, after, before }: FeedRequest): Promise<FeedPage> {
    const rows =
      before !== undefined
        ? (await this.select(FEED_BEFORE, query, [before.xact, before.seq, limit + 1])).reverse()
        : after !== undefined
          ? await this.select(FEED_AFTER, query, [after.xact, after.seq, limit + 1])
          : await this.select(FEED_FROM_START, query, [limit + 1]);
    const hasMore = rows.length > limit;
    // Backwards, the extra row is the oldest (first after the reverse); forwards, the newest (last).
    const page = hasMore ? (before !== undefined ? rows.slice(1) : rows.slice(0, limit)) : rows;
    return { items: page.map(toFeedEvent), hasMore };
  }

  /** A list's statement for who asks: the filters, then its own parameters (and EVERY_ACCOUNT for a customer). */
  private select(shape: ListShape, query: EventLogQuery, own: unknown[]): Promise<LoggedEventRow[]> {
    const statements = STATEMENTS.get(shape) as { anyOwner: string; ownAndEveryAccount: string };
    return query.subjectOwnerId === undefined
      ? this.host.query<LoggedEventRow>(statements.anyOwner, [...filterParams(query), ...own])
      : this.host.query<LoggedEventRow>(statements.ownAndEveryAccount, [...filterParams(query), ...own, EVERY_ACCOUNT]);
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
