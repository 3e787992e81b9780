import { Message } from '@petstore/domain';
import { MessageOrmEntity } from './message.orm-entity';

export const MessageMapper = {
  toDomain(row: MessageOrmEntity): Message {
    return Message.restore({
      id: row.id,
      text: row.text,
      status: row.status,
      createdAt: row.createdAt,
      deliveredAt: row.deliveredAt,
      ownerId: row.ownerId,
    });
  },
  /** A newly queued message: no attempt made yet. */
  toNewRow(message: Message): MessageOrmEntity {
    const row = new MessageOrmEntity();
    const s = message.toSnapshot();
    row.id = s.id;
    row.ownerId = s.ownerId;
    row.text = s.text;
    row.status = s.status;
    row.createdAt = s.createdAt;
    row.deliveredAt = s.deliveredAt;
    row.attempts = 0;
    row.lastError = null;
    return row;
  },
};
