import { Message } from '@petstore/domain';

/**
 * The job queue that delivers messages (pg-boss in PostgreSQL). `enqueue` must run inside the
 * `UnitOfWork.run` that stores the message: the job commits with the message row or not at all, so
 * a rolled-back request queues nothing and a committed message is never left without its job.
 */
export abstract class MessageQueue {
  abstract enqueue(messageId: string): Promise<void>;
}

/**
 * Where a message goes when it is delivered. The service's own inbox needs no transport (the
 * state change is the delivery); a real one (e-mail, a webhook, a broker) implements this. It
 * may be called more than once for a message (delivery is at least once), so it should be
 * idempotent on `message.id`. Throwing makes the queue retry later, with back-off.
 */
export abstract class MessageTransport {
  abstract deliver(message: Message): Promise<void>;
}
