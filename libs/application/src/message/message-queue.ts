import { Message } from '@petstore/domain';

/** A queued message taken by a worker, with the number of delivery attempts that failed so far. */
export interface ClaimedMessage {
  message: Message;
  attempts: number;
}

/**
 * The delivery side of the message store: a queue in PostgreSQL. Only to be used inside
 * `UnitOfWork.run`: the claimed rows stay locked until that transaction ends, and another
 * worker skips them meanwhile, so no message is handed to two workers at once.
 */
export abstract class MessageQueue {
  /**
   * Locks up to `limit` queued messages whose next attempt is due at `now` and that no other
   * transaction holds (`FOR UPDATE SKIP LOCKED`), the longest-due first.
   */
  abstract claimDue(now: Date, limit: number): Promise<ClaimedMessage[]>;
  /** Records a delivery (status and deliveredAt of `message`) and how many attempts it took. */
  abstract markDelivered(message: Message, attempts: number): Promise<void>;
  /** Keeps the message queued until `nextAttemptAt`, counting the failed attempt. */
  abstract scheduleRetry(id: string, failure: { attempts: number; nextAttemptAt: Date; error: string }): Promise<void>;
}

/**
 * Where a message goes when it is delivered. The service's own inbox needs no transport (the
 * state change is the delivery); a real one (e-mail, a webhook, a broker) implements this. It
 * may be called more than once for a message (delivery is at least once), so it should be
 * idempotent on `message.id`. Throwing makes the worker retry later, with back-off.
 */
export abstract class MessageTransport {
  abstract deliver(message: Message): Promise<void>;
}
