import { Injectable } from '@nestjs/common';
import { Account, Message, MessageNotFoundError } from '@petstore/domain';
import { Clock, UnitOfWork } from '../ports';
import { Page, PageRequest } from '../shared/page';
import { MessageQueue, MessageTransport } from './message-queue';
import { MessageListFilter, MessageRepository } from './message.repository';
import { RetryBackoff } from './retry-backoff';

export interface QueueMessageCommand {
  text: string;
  ownerId: number;
}

/** `POST /messages`: the message is stored as queued; a worker delivers it later. */
@Injectable()
export class QueueMessage {
  constructor(
    private readonly messages: MessageRepository,
    private readonly clock: Clock,
  ) {}

  async execute(command: QueueMessageCommand): Promise<Message> {
    const message = Message.queue({
      id: this.messages.nextId(),
      text: command.text,
      ownerId: command.ownerId,
      now: this.clock.now(),
    });
    await this.messages.add(message);
    return message;
  }
}

@Injectable()
export class MessageQueries {
  constructor(private readonly messages: MessageRepository) {}

  /** The message, if `viewer` owns it or is an administrator; another's is "not found", not "forbidden". */
  async get(id: string, viewer: Account): Promise<Message> {
    const message = await this.messages.findById(id);
    if (!message || !viewer.mayActFor(message.ownerId)) throw new MessageNotFoundError(id);
    return message;
  }

  /** The store's inbox (administrators), oldest first. */
  list(filter: MessageListFilter, page: PageRequest): Promise<Page<Message>> {
    return this.messages.list(filter, page);
  }
}

export interface DeliveryReport {
  /** Messages this run took from the queue. */
  claimed: number;
  delivered: number;
  /** Deliveries that failed and were scheduled again. */
  retried: number;
}

/** How the worker treats failures; bound by value in the composition root. */
export class MessageDeliverySettings {
  constructor(
    readonly backoff: RetryBackoff = new RetryBackoff(),
    /** A transport call that takes longer counts as failed (its message is retried later). */
    readonly deliveryTimeoutMs = 10_000,
  ) {}
}

/**
 * One run of the message worker, in one transaction: takes up to `batchSize` due messages that
 * no other worker holds, hands each to the transport and marks it delivered, or, when the
 * transport fails, schedules another attempt with exponential back-off.
 *
 * Delivery is at least once: should the process die, or the commit fail, after the transport
 * was called, the transaction rolls back and the message is delivered again by the next run.
 */
@Injectable()
export class DeliverDueMessages {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly queue: MessageQueue,
    private readonly transport: MessageTransport,
    private readonly clock: Clock,
    private readonly settings: MessageDeliverySettings,
  ) {}

  execute(batchSize: number): Promise<DeliveryReport> {
    return this.uow.run(async () => {
      const claimed = await this.queue.claimDue(this.clock.now(), batchSize);
      const report: DeliveryReport = { claimed: claimed.length, delivered: 0, retried: 0 };
      for (const { message, attempts } of claimed) {
        try {
          await this.deliverWithin(message, this.settings.deliveryTimeoutMs);
        } catch (error) {
          const failedAt = this.clock.now();
          await this.queue.scheduleRetry(message.id, {
            attempts: attempts + 1,
            nextAttemptAt: this.settings.backoff.nextAttemptAt(attempts + 1, failedAt),
            error: failureText(error),
          });
          report.retried++;
          continue;
        }
        message.deliver(this.clock.now());
        await this.queue.markDelivered(message, attempts + 1);
        report.delivered++;
      }
      return report;
    });
  }

  private deliverWithin(message: Message, timeoutMs: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`delivery timed out after ${timeoutMs} ms`)), timeoutMs);
    });
    return Promise.race([this.transport.deliver(message), timeout]).finally(() => clearTimeout(timer));
  }
}

function failureText(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.length > 1000 ? `${text.slice(0, 997)}...` : text;
}
