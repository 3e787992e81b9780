import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import {
  ClaimedMessage,
  MessageListFilter,
  MessageQueue,
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

/** The PostgreSQL channel a queued message is announced on (`NOTIFY`), to wake the workers at once. */
export const MESSAGES_CHANNEL = 'petstore_messages';

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
    const row = MessageMapper.toNewRow(message);
    // One statement: the row and its NOTIFY commit together (a notification is sent on commit only).
    await this.host.manager.query(
      `WITH added AS (
         INSERT INTO messages (id, owner_id, body, status, created_at, delivered_at, attempts, next_attempt_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         RETURNING id)
       SELECT pg_notify($9, '') FROM added`,
      [row.id, row.ownerId, row.text, row.status, row.createdAt, row.deliveredAt, row.attempts, row.nextAttemptAt, MESSAGES_CHANNEL],
    );
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
}

@Injectable()
export class TypeOrmMessageQueue extends MessageQueue {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  private get rows() {
    return this.host.manager.getRepository(MessageOrmEntity);
  }

  async claimDue(now: Date, limit: number): Promise<ClaimedMessage[]> {
    // Outside a transaction the row locks would be released as soon as they are taken.
    if (!this.host.inTransaction) throw new Error('MessageQueue.claimDue must run inside UnitOfWork.run.');
    const rows = await this.rows
      .createQueryBuilder('m')
      .where('m.status = :queued', { queued: 'queued' })
      .andWhere('m.nextAttemptAt <= :now', { now })
      .orderBy('m.nextAttemptAt', 'ASC')
      .addOrderBy('m.seq', 'ASC')
      .limit(limit)
      .setLock('pessimistic_write')
      .setOnLocked('skip_locked')
      .getMany();
    return rows.map((row) => ({ message: MessageMapper.toDomain(row), attempts: row.attempts }));
  }

  async markDelivered(message: Message, attempts: number): Promise<void> {
    const { id, status, deliveredAt } = message.toSnapshot();
    await this.rows.update({ id }, { status, deliveredAt, attempts, lastError: null });
  }

  async scheduleRetry(id: string, failure: { attempts: number; nextAttemptAt: Date; error: string }): Promise<void> {
    await this.rows.update(
      { id, status: 'queued' },
      { attempts: failure.attempts, nextAttemptAt: failure.nextAttemptAt, lastError: failure.error },
    );
  }
}
