import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import {
  MessageListFilter,
  MessageQueueStats,
  MessageRepository,
  Page,
  PageRequest,
  pageFromRows,
} from '@petstore/application';
import { Message, MessageStatus } from '@petstore/domain';
import { listStatement } from '../../database/list-statement';
import { TransactionHost } from '../../database/transaction-host';

/*
 * Fixed SQL run straight on pg by the transaction host (no query building, no entity hydration):
 * rows map straight to domain objects. The table is the one its migrations create.
 */
/** A newly queued message: no attempt made yet (seq is left to its sequence: insertion order). */
const INSERT = `INSERT INTO messages (id, owner_id, body, status, created_at, delivered_at, attempts, last_error)
  VALUES ($1, $2, $3, $4, $5, $6, 0, NULL)`;
/** `version` is read, never written: the database keeps it (migration ResourceVersions). */
const COLUMNS = `id, seq, owner_id, body, status, created_at, delivered_at, version`;
const FIND_BY_ID = `SELECT ${COLUMNS} FROM messages WHERE id = $1`;
/** The inbox, in insertion order (listStatement): after a seq, of a status. */
const LIST_SELECT = `SELECT ${COLUMNS} FROM messages`;
const LIST_AFTER = (p: string) => `seq > ${p}`;
const LIST_STATUS = (p: string) => `status = ${p}`;
const LIST_ORDER = (limit: string) => `ORDER BY seq LIMIT ${limit}`;
/**
 * Only a message still queued changes (a late duplicate attempt leaves a settled message as it is). A delivery
 * clears the last error; a failure or a give-up without an error of its own keeps the previous one.
 */
const RECORD_ATTEMPT = `UPDATE messages
  SET status = $2::varchar, delivered_at = $3, attempts = GREATEST(attempts, $4),
      last_error = CASE WHEN $2::varchar = 'delivered' THEN NULL ELSE COALESCE($5, last_error) END
  WHERE id = $1 AND status = 'queued'`;
const QUEUE_STATS = `SELECT (SELECT count(*)::int FROM messages WHERE status = 'queued') AS queued,
  (SELECT created_at FROM messages WHERE status = 'queued' ORDER BY seq LIMIT 1) AS oldest,
  (SELECT count(*)::int FROM messages WHERE status = 'failed') AS failed`;

/** A row of `messages` as pg returns it (bigint as text, timestamptz as a Date). */
interface MessageRow {
  id: string;
  seq: string;
  owner_id: string;
  body: string;
  status: MessageStatus;
  created_at: Date;
  delivered_at: Date | null;
  version: string;
}

const toMessage = (row: MessageRow): Message =>
  Message.restore({
    id: row.id,
    text: row.body,
    status: row.status,
    createdAt: row.created_at,
    deliveredAt: row.delivered_at,
    ownerId: Number(row.owner_id),
    version: Number(row.version),
  });

@Injectable()
export class PgMessageRepository extends MessageRepository {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  nextId(): string {
    return randomUUID();
  }

  async add(message: Message): Promise<void> {
    const { id, ownerId, text, status, createdAt, deliveredAt } = message.toSnapshot();
    await this.host.query(INSERT, [id, ownerId, text, status, createdAt, deliveredAt]);
  }

  async findById(id: string): Promise<Message | null> {
    const [row] = await this.host.query<MessageRow>(FIND_BY_ID, [id]);
    return row ? toMessage(row) : null;
  }

  async list(filter: MessageListFilter, { limit, afterId }: PageRequest): Promise<Page<Message>> {
    const { text, params } = listStatement({
      select: LIST_SELECT,
      conditions: [
        [afterId || undefined, LIST_AFTER],
        [filter.status || undefined, LIST_STATUS],
      ],
      order: LIST_ORDER,
      limit: limit + 1,
    });
    const rows = await this.host.query<MessageRow>(text, params);
    const page = pageFromRows(rows, limit, (row) => Number(row.seq));
    return { items: page.items.map(toMessage), nextAfterId: page.nextAfterId };
  }

  async recordAttempt(message: Message, attempt: { attempts: number; error: string | null }): Promise<boolean> {
    const { id, status, deliveredAt } = message.toSnapshot();
    // One statement, no lock held beyond it.
    const { affected: updated } = await this.host.execute(RECORD_ATTEMPT, [
      id,
      status,
      deliveredAt,
      attempt.attempts,
      attempt.error,
    ]);
    return updated > 0;
  }

  async queueStats(): Promise<MessageQueueStats> {
    const [row] = await this.host.query<{ queued: number; oldest: Date | null; failed: number }>(QUEUE_STATS);
    return { queued: row.queued, oldestQueuedAt: row.oldest, failed: row.failed };
  }
}
