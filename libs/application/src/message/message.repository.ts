import { Message, MessageStatus } from '@petstore/domain';
import { Page, PageRequest } from '../shared/page';

export interface MessageListFilter {
  status?: MessageStatus;
}

/**
 * The messages posted to `POST /messages`. Lists are keyset-paginated on an internal,
 * ever-increasing sequence number (the ids are random UUIDs, which do not sort by age):
 * `PageRequest.afterId` and `Page.nextAfterId` are that sequence number, never shown as such.
 */
export abstract class MessageRepository {
  /** A new, random identity (a UUID) for a message about to be queued. */
  abstract nextId(): string;
  /** Stores a newly queued message, due for delivery at once, and wakes the workers. */
  abstract add(message: Message): Promise<void>;
  abstract findById(id: string): Promise<Message | null>;
  /** Oldest first (in the order they were queued). */
  abstract list(filter: MessageListFilter, page: PageRequest): Promise<Page<Message>>;
}
