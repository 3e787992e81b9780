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
import { Message } from '@petstore/domain';
import { FindOptionsWhere, MoreThan } from 'typeorm';
import { TransactionHost } from '../../database/transaction-host';
import { MessageMapper } from './message.mapper';
import { MessageOrmEntity } from './message.orm-entity';

@Injectable()
export class TypeOrmMessageRepository extends MessageRepository {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  private get rows() {
    return this.host.manager.getRepository(MessageOrmEntity);
  }

  nextId(): string {
    return randomUUID();
  }

  async add(message: Message): Promise<void> {
    await this.rows.insert(MessageMapper.toNewRow(message));
  }

  async findById(id: string): Promise<Message | null> {
    const row = await this.rows.findOneBy({ id });
    return row ? MessageMapper.toDomain(row) : null;
  }

  async list(filter: MessageListFilter, { limit, afterId }: PageRequest): Promise<Page<Message>> {
    const where: FindOptionsWhere<MessageOrmEntity> = {};
    if (filter.status) where.status = filter.status;
    if (afterId) where.seq = MoreThan(afterId);
    const rows = await this.rows.find({ where, order: { seq: 'ASC' }, take: limit + 1 });
    const page = pageFromRows(rows, limit, (row) => row.seq);
    return { items: page.items.map(MessageMapper.toDomain), nextAfterId: page.nextAfterId };
  }

  async recordAttempt(message: Message, attempt: { attempts: number; error: string | null }): Promise<boolean> {
    const { id, status, deliveredAt } = message.toSnapshot();
    // One statement, no lock held beyond it; only a message still queued changes (a late duplicate
    // attempt leaves a settled message as it is). A delivery clears the last error; a failure or
    // a give-up without an error of its own keeps the previous one.
    const [, updated]: [unknown[], number] = await this.host.manager.query(
      `UPDATE messages
          SET status = $2::varchar, delivered_at = $3, attempts = GREATEST(attempts, $4),
              last_error = CASE WHEN $2::varchar = 'delivered' THEN NULL ELSE COALESCE($5, last_error) END
        WHERE id = $1 AND status = 'queued'`,
      [id, status, deliveredAt, attempt.attempts, attempt.error],
    );
    return updated > 0;
  }

  async queueStats(): Promise<MessageQueueStats> {
    const [row]: Array<{ queued: number; oldest: Date | null; failed: number }> = await this.host.manager.query(
      `SELECT (SELECT count(*)::int FROM messages WHERE status = 'queued') AS queued,
              (SELECT created_at FROM messages WHERE status = 'queued' ORDER BY seq LIMIT 1) AS oldest,
              (SELECT count(*)::int FROM messages WHERE status = 'failed') AS failed`,
    );
    return { queued: row.queued, oldestQueuedAt: row.oldest, failed: row.failed };
  }
}
