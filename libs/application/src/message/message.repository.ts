import { Message, MessageStatus } from '@petstore/domain';
import { Page, PageRequest } from '../common/page';

export interface MessageListFilter {
  status?: MessageStatus;
}

/** What operators watch: the messages waiting for delivery, and those given up. */
export interface MessageQueueStats {
  queued: number;
  /** When the oldest still-queued message was queued; null when none is. */
  oldestQueuedAt: Date | null;
  failed: number;
}

/**
 * The messages posted to `POST /messages`. Lists are keyset-paginated on an internal,
 * ever-increasing sequence number (the ids are random UUIDs, which do not sort by age):
 * `PageRequest.afterId` and `Page.nextAfterId` are that sequence number, never shown as such.
 */
export abstract class MessageRepository {
  /** A new, random identity (a UUID) for a message about to be queued. */
  abstract nextId(): string;
  /** Stores a newly queued message. */
  abstract add(message: Message): Promise<void>;
  abstract findById(id: string): Promise<Message | null>;
  /** Oldest first (in the order they were queued). */
  abstract list(filter: MessageListFilter, page: PageRequest): Promise<Page<Message>>;
  /**
   * Records the outcome of a delivery attempt (the message's status and deliveredAt, and the
   * number of attempts made), unless the message was settled meanwhile; false then.
   */
  abstract recordAttempt(message: Message, attempt: { attempts: number; error: string | null }): Promise<boolean>;
  abstract queueStats(): Promise<MessageQueueStats>;
}
