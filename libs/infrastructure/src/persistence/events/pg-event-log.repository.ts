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
 * (subject_owner_id, seq) for a customer.
 *
 * Commit order: `webhook_event_commits` holds each event's writing transaction (`xact_id`, pg_current_xact_id(),
 * recorded by a trigger on `webhook_events`; the events written before it existed hold transaction 0, the oldest),
 * indexed by (xact_id, seq) and (subject_owner_id, xact_id, seq): the feed walks that table and joins each event by
 * its `seq`. An event is settled when its transaction is older than the oldest transaction still in progress
 * (`pg_snapshot_xmin` of the statement's own snapshot): every older one has ended, so no event can appear before it
 * any more. The feed lists settled events only: a position it hands out is final. The other lists read
 * `webhook_events` and look each listed event's transaction up by `seq` (for its position, once settled).
 *
 * A customer sees its own events and every account's (EVERY_ACCOUNT: the catalogue's). Each list is then two
 * branches, one per owner, each read in the list's order through its index and cut at the page's size, then merged:
 * an OR of the two owners would read every event of both to sort them (the catalogue's are many).
 */
/** An event's transaction, in the lists that read `webhook_events` first (0 if its row is missing: the oldest). */
const XACT = `COALESCE(c.xact_id, '0'::xid8)`;
const SETTLED = `${XACT} < pg_snapshot_xmin(pg_current_snapshot())`;
const COLUMNS = `e.id, e.type, e.subject_owner_id, e.body, e.created_at, e.seq,
  ${XACT}::text AS xact, ${SETTLED} AS settled`;
/**
 * The filters of every list but the owner's: `$2` the types, `$3` created at or after, `$4` created before. Not
 * listStatement's fragments (docs/architecture.md): here no filter chooses the index (each list walks its own, by
 * position, and these are checked on the rows it reads), so one text per list shape serves every combination, and
 * the plans pg-event-log.repository.spec.ts holds stay the ones it checks.
 */
const DATE_FILTERS = `($3::timestamptz IS NULL OR e.created_at >= $3)
  AND ($4::timestamptz IS NULL OR e.created_at < $4)`;
const FILTERS = `($2::text[] IS NULL OR e.type = ANY ($2)) AND ${DATE_FILTERS}`;
/** The events with their transaction, read from `webhook_events` (by `seq`): the newest-first lists. */
const BY_SEQ = `webhook_events AS e LEFT JOIN webhook_event_commits AS c ON c.seq = e.seq`;
/** The same, read from `webhook_event_commits` (by transaction, then `seq`): the feed. */
const BY_COMMIT = `webhook_event_commits AS c JOIN webhook_events AS e ON e.seq = c.seq AND e.endpoint_id IS NULL`;

/**
 * One list: where it reads, whose owner column its index starts with, its own condition, its order (on the tables,
 * and on the merged branches' columns), its limit parameter.
 */
interface ListShape {
  from: string;
  owner: string;
  /**
   * Its own condition: for every owner (`who` undefined), or for one (`who` its parameter), where the feed's position
   * is compared with the owner first, (subject_owner_id, xact_id, seq), so that only the owner's index can bound the
   * scan (by (xact_id, seq) alone the planner may take the smaller index and filter the owner out of the whole log).
   */
  where: (who?: string) => string;
  order: string;
  mergedOrder: string;
  limit: string;
}

/** Every account's events, or (`$1` set) one account's only: the administrator's lists. */
const anyOwner = ({ from, owner, where, order, limit }: ListShape): string => `SELECT ${COLUMNS} FROM ${from}
  WHERE e.endpoint_id IS NULL AND ($1::bigint IS NULL OR ${owner} = $1) AND ${FILTERS} AND ${where()}
  ORDER BY ${order} LIMIT ${limit}`;

/** A customer's: the account `$1`'s events and EVERY_ACCOUNT's (the parameter after the limit). */
function ownAndEveryAccount({ from, owner, where, order, mergedOrder, limit }: ListShape): string {
  const everyAccount = `$${Number(limit.slice(1)) + 1}`;
  const branch = (who: string) => `(SELECT ${COLUMNS}, ${XACT} AS xact_order FROM ${from}
    WHERE e.endpoint_id IS NULL AND ${owner} = ${who} AND ${FILTERS} AND ${where(who)}
    ORDER BY ${order} LIMIT ${limit})`;
  return `SELECT visible.id, visible.type, visible.subject_owner_id, visible.body, visible.created_at, visible.seq,
    visible.xact, visible.settled
  FROM (${branch('$1')} UNION ALL ${branch(everyAccount)}) AS visible
  ORDER BY ${mergedOrder} LIMIT ${limit}`;
}

/** Newest first: `$5` the `seq` to continue below, `$6` the rows to read. */
const NEWEST_FIRST: ListShape = {
  from: BY_SEQ,
  owner: 'e.subject_owner_id',
  where: () => '($5::bigint IS NULL OR e.seq < $5)',
  order: 'e.seq DESC',
  mergedOrder: 'seq DESC',
  limit: '$6',
};
/** The feed's transaction and its settling, on `webhook_event_commits` (where every row has its transaction). */
const FEED_SETTLED = `c.xact_id < pg_snapshot_xmin(pg_current_snapshot())`;
/** Past the position (`$5` its transaction, `$6` its seq), in the order of the index the list reads. */
const fromPosition = (direction: '<' | '>', who?: string): string =>
  who === undefined
    ? `(c.xact_id, c.seq) ${direction} ($5::xid8, $6::bigint)`
    : `(c.subject_owner_id, c.xact_id, c.seq) ${direction} (${who}::bigint, $5::xid8, $6::bigint)`;
/** The feed from its start: the oldest settled events; `$5` the rows to read. */
const FEED_FROM_START: ListShape = {
  from: BY_COMMIT,
  owner: 'c.subject_owner_id',
  where: () => FEED_SETTLED,
  order: `c.xact_id, c.seq`,
  mergedOrder: 'xact_order, seq',
  limit: '$5',
};
/** The feed after a position (`$5` its transaction, `$6` its seq), oldest first; `$7` the rows to read. */
const FEED_AFTER: ListShape = {
  from: BY_COMMIT,
  owner: 'c.subject_owner_id',
  where: (who) => `${FEED_SETTLED} AND ${fromPosition('>', who)}`,
  order: `c.xact_id, c.seq`,
  mergedOrder: 'xact_order, seq',
  limit: '$7',
};
/** The feed before a position (`$5` its transaction, `$6` its seq), nearest first; `$7` the rows to read. */
const FEED_BEFORE: ListShape = {
  from: BY_COMMIT,
  owner: 'c.subject_owner_id',
  where: (who) => `${FEED_SETTLED} AND ${fromPosition('<', who)}`,
  order: `c.xact_id DESC, c.seq DESC`,
  mergedOrder: 'xact_order DESC, seq DESC',
  limit: '$7',
};

/** The columns of a list's row, read from a subquery (`listed`, `visible`) that selected COLUMNS. */
const LISTED = `listed.id, listed.type, listed.subject_owner_id, listed.body, listed.created_at, listed.seq,
  listed.xact, listed.settled`;
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
const NEWEST_FIRST_OF_TYPES = `SELECT ${LISTED}
  FROM (SELECT DISTINCT wanted FROM unnest($2::text[]) AS wanted) AS types,
  LATERAL (SELECT ${COLUMNS} FROM ${BY_SEQ}
    WHERE e.endpoint_id IS NULL AND e.type >= types.wanted AND e.type <= types.wanted
      AND e.seq < COALESCE($5::bigint, ${MAX_BIGINT}) AND ($1::bigint IS NULL OR e.subject_owner_id = $1)
      AND ${DATE_FILTERS}
    ORDER BY e.type DESC, e.seq DESC LIMIT $6) AS listed
  ORDER BY seq DESC LIMIT $6`;

/**
 * A newest-first list with a time bound (`createdAfter`, `createdBefore`): the walk by `seq` meets the bound as a
 * filter, and `createdBefore` far in the past (or `createdAfter` in the future) walked a customer's whole history to
 * find a page (issue 48, item 5). Bounded instead: each owner's range is read newest first, at most `scanLimit` rows
 * from the cursor (`$1`, the seq to continue below; `$2` the rows; `$6` the owner), light columns only, whether each
 * matches computed here (`$3` the types, `$4` at or after, `$5` before); the page's bodies are then read by their seq.
 * Not an index on created_at: the list is in `seq` order, and a range of created_at is sorted by seq only after
 * reading it whole, which a recent `createdBefore` makes the whole history again.
 */
const SCAN_MATCHES = `($3::text[] IS NULL OR type = ANY ($3))
  AND ($4::timestamptz IS NULL OR created_at >= $4) AND ($5::timestamptz IS NULL OR created_at < $5)`;
const SCAN_EVERY_OWNER = `SELECT seq, ${SCAN_MATCHES} AS matches FROM webhook_events
  WHERE endpoint_id IS NULL AND seq < COALESCE($1::bigint, ${MAX_BIGINT})
  ORDER BY seq DESC LIMIT $2`;
const SCAN_OWNER = `SELECT seq, ${SCAN_MATCHES} AS matches FROM webhook_events
  WHERE endpoint_id IS NULL AND subject_owner_id = $6 AND seq < COALESCE($1::bigint, ${MAX_BIGINT})
  ORDER BY seq DESC LIMIT $2`;
const BY_SEQS = `SELECT ${COLUMNS} FROM ${BY_SEQ} WHERE e.endpoint_id IS NULL AND e.seq = ANY ($1::bigint[])
  ORDER BY e.seq DESC`;
/** Rows one owner's range may read for one page of a time-bounded list: ten of the largest pages. */
export const TIME_BOUNDED_SCAN_LIMIT = 1000;

/** Each list's statement for an administrator and for a customer. */
const STATEMENTS = new Map(
  [NEWEST_FIRST, FEED_FROM_START, FEED_AFTER, FEED_BEFORE].map((shape) => [
    shape,
    { anyOwner: anyOwner(shape), ownAndEveryAccount: ownAndEveryAccount(shape) },
  ]),
);
const FIND_BY_ID = `SELECT ${COLUMNS} FROM ${BY_SEQ} WHERE e.id = $1 AND e.endpoint_id IS NULL`;
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

  /** Rows one owner's range may read for a page of a time-bounded list (a subclass of a test makes it small). */
  protected readonly scanLimit: number = TIME_BOUNDED_SCAN_LIMIT;

  async list(query: EventLogQuery, { limit, afterId }: PageRequest): Promise<Page<LoggedEvent>> {
    if (query.createdAfter !== undefined || query.createdBefore !== undefined) {
      return this.listTimeBounded(query, { limit, afterId });
    }
    const own = [afterId ?? null, limit + 1];
    const rows =
      query.types?.length && query.subjectOwnerId === undefined
        ? await this.host.query<LoggedEventRow>(NEWEST_FIRST_OF_TYPES, [...filterParams(query), ...own])
        : await this.select(NEWEST_FIRST, query, own);
    return pageFromRows(rows.map(toLoggedEvent), limit, (event) => event.seq);
  }

  /**
   * At most `scanLimit` rows of each owner's range (every owner's, or a customer's own and the catalogue's), newest
   * first from the cursor. A range read to its limit is not read below its last seq: the page holds the matching rows
   * at or above the highest such seq, and goes on below it. So a sparse time range gives pages shorter than asked
   * (even empty) that still have a next one; following them reads the history at `scanLimit` rows a page, never all
   * of it in one request.
   */
  private async listTimeBounded(query: EventLogQuery, { limit, afterId }: PageRequest): Promise<Page<LoggedEvent>> {
    const owners = query.subjectOwnerId === undefined ? [null] : [query.subjectOwnerId, EVERY_ACCOUNT];
    const filters = [query.types?.length ? query.types : null, query.createdAfter ?? null, query.createdBefore ?? null];
    let cut = 0; // the seq not to read below this page: 0, or where a range stopped at its limit
    const matching: number[] = [];
    for (const owner of owners) {
      const params = [afterId ?? null, this.scanLimit, ...filters];
      const rows = await this.host.query<{ seq: string; matches: boolean }>(
        owner === null ? SCAN_EVERY_OWNER : SCAN_OWNER,
        owner === null ? params : [...params, owner],
      );
      if (rows.length === this.scanLimit) cut = Math.max(cut, Number(rows[rows.length - 1].seq));
      for (const row of rows) if (row.matches) matching.push(Number(row.seq));
    }
    const seqs = matching.filter((seq) => seq >= cut).sort((a, b) => b - a);
    const pageSeqs = seqs.slice(0, limit);
    const rows = pageSeqs.length ? await this.host.query<LoggedEventRow>(BY_SEQS, [pageSeqs]) : [];
    const nextAfterId = seqs.length > limit ? pageSeqs[limit - 1] : cut > 0 ? cut : null;
    return { items: rows.map(toLoggedEvent), nextAfterId };
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
