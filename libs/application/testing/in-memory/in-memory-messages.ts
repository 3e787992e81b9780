import { randomUUID } from 'node:crypto';
import { FIRST_VERSION, Message } from '@petstore/domain';
import { MessageQueue, MessageTransport } from '../../src/message/message-queue';
import { MessageListFilter, MessageQueueStats, MessageRepository } from '../../src/message/message.repository';
import { ConstraintViolationError } from '../../src/ports';
import { Page, PageRequest, pageFromRows } from '../../src/common/page';
import { InMemoryDatabase, MessageRow, versionAfter } from './in-memory-database';

const toMessage = ({ seq: _seq, attempts: _attempts, lastError: _lastError, ...props }: MessageRow) =>
  Message.restore(props);

/** Messages, paged by their queue sequence number; an attempt is recorded only while the message is queued. */
export class InMemoryMessageRepository extends MessageRepository {
  constructor(private readonly db: InMemoryDatabase) {
    super();
  }

  private get rows(): MessageRow[] {
    return [...this.db.tables.messages.values()].sort((a, b) => a.seq - b.seq);
  }

  nextId(): string {
    return randomUUID();
  }

  async add(message: Message): Promise<void> {
    const props = message.toSnapshot();
    if (this.db.tables.messages.has(props.id)) {
      throw new ConstraintViolationError('unique', 'messages_pkey', `duplicate key: message ${props.id} exists.`);
    }
    if (!this.db.tables.accounts.has(props.ownerId)) {
      throw new ConstraintViolationError('foreign_key', 'messages_owner_id_fkey', `No account ${props.ownerId}.`);
    }
    const row = { ...props, version: FIRST_VERSION, seq: this.db.nextId('messages'), attempts: 0, lastError: null };
    this.db.tables.messages.set(props.id, row);
  }

  async findById(id: string): Promise<Message | null> {
    const row = this.db.tables.messages.get(id);
    return row ? toMessage(row) : null;
  }

  async list(filter: MessageListFilter, { limit, afterId }: PageRequest): Promise<Page<Message>> {
    const rows = this.rows.filter(
      (row) => (!filter.status || row.status === filter.status) && (!afterId || row.seq > afterId),
    );
    const page = pageFromRows(rows.slice(0, limit + 1), limit, (row) => row.seq);
    return { items: page.items.map(toMessage), nextAfterId: page.nextAfterId };
  }

  async recordAttempt(message: Message, attempt: { attempts: number; error: string | null }): Promise<boolean> {
    const { id, status, deliveredAt } = message.toSnapshot();
    const row = this.db.tables.messages.get(id);
    if (!row || row.status !== 'queued') return false;
    row.version = versionAfter(row, { ...row, status, deliveredAt }, ['status', 'deliveredAt']);
    row.status = status;
    row.deliveredAt = deliveredAt;
    row.attempts = Math.max(row.attempts, attempt.attempts);
    row.lastError = status === 'delivered' ? null : (attempt.error ?? row.lastError);
    return true;
  }

  async queueStats(): Promise<MessageQueueStats> {
    const queued = this.rows.filter((row) => row.status === 'queued');
    return {
      queued: queued.length,
      oldestQueuedAt: queued[0]?.createdAt ?? null,
      failed: this.rows.filter((row) => row.status === 'failed').length,
    };
  }
}

/** The job queue: a job is a row of the store, so it commits or rolls back with the message (as pg-boss's does). */
export class InMemoryMessageQueue extends MessageQueue {
  constructor(private readonly db: InMemoryDatabase) {
    super();
  }

  async enqueue(messageId: string): Promise<void> {
    this.db.assertInTransaction('enqueue');
    this.db.tables.deliveryJobs.push(messageId);
  }
}

/** A transport that records what it delivers, or fails (`failWith`) or hangs (`hang`) when told to. */
export class RecordingMessageTransport extends MessageTransport {
  readonly delivered: Message[] = [];
  failWith: Error | null = null;
  hang = false;

  deliver(message: Message): Promise<void> {
    if (this.hang) return new Promise<void>(() => undefined);
    if (this.failWith) return Promise.reject(this.failWith);
    this.delivered.push(message);
    return Promise.resolve();
  }
}
