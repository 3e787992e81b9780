import { Injectable } from '@nestjs/common';
import { Account, Message, MessageNotFoundError } from '@petstore/domain';
import { Clock, UnitOfWork } from '../ports';
import { Page, PageRequest } from '../common/page';
import { MessageQueue, MessageTransport } from './message-queue';
import { MessageListFilter, MessageRepository } from './message.repository';
import { EventRecorder } from '../events/event.ports';
import { visibleTo } from '../common/visible-to';

export interface QueueMessageCommand {
  text: string;
  ownerId: number;
}

/** `POST /messages`: the message is stored as queued and its delivery job queued, in one transaction. */
@Injectable()
export class QueueMessage {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly messages: MessageRepository,
    private readonly queue: MessageQueue,
    private readonly clock: Clock,
  ) {}

  execute(command: QueueMessageCommand): Promise<Message> {
    return this.uow.run(async () => {
      const message = Message.queue({
        id: this.messages.nextId(),
        text: command.text,
        ownerId: command.ownerId,
        now: this.clock.now(),
      });
      await this.messages.add(message);
      await this.queue.enqueue(message.id);
      return message;
    });
  }
}

@Injectable()
export class MessageQueries {
  constructor(private readonly messages: MessageRepository) {}

  /** The message, if `viewer` owns it or is an administrator; another's is "not found", not "forbidden". */
  async get(id: string, viewer: Account): Promise<Message> {
    return visibleTo(await this.messages.findById(id), viewer, () => new MessageNotFoundError(id));
  }

  /** The store's inbox (administrators), oldest first. */
  list(filter: MessageListFilter, page: PageRequest): Promise<Page<Message>> {
    return this.messages.list(filter, page);
  }
}

/** How deliveries are attempted; bound by value in the composition root. */
export class MessageDeliverySettings {
  constructor(
    /** Attempts before a message is given up as `failed` (MESSAGE_MAX_ATTEMPTS). */
    readonly maxAttempts = 10,
    /** A transport call that takes longer counts as failed (its message is retried later). */
    readonly deliveryTimeoutMs = 10_000,
  ) {}
}

export interface DeliveryAttempt {
  messageId: string;
  /** 1 for the first attempt. */
  attempt: number;
  /** No attempt is left after this one (the queue's count: MessageDeliverySettings.maxAttempts). */
  isLast: boolean;
}

export type DeliveryOutcome = 'delivered' | 'settled' | 'missing';

/** The transport failed; the message stays queued (`givenUp` false) or is now `failed`. */
export class DeliveryFailedError extends Error {
  constructor(
    readonly messageId: string,
    readonly attempt: number,
    readonly givenUp: boolean,
    readonly reason: string,
  ) {
    super(`Delivery of message ${messageId} failed (attempt ${attempt}${givenUp ? ', the last' : ''}): ${reason}`);
  }
}

/**
 * One delivery attempt of one message, run by the job queue's worker. No transaction and no row
 * lock is held while the transport runs: the queue's job (taken with SKIP LOCKED, then held as an
 * expiring lease) is what keeps other workers off the message. The outcome is then recorded in
 * one short statement. Delivery is at least once: should the process die after the transport was
 * called and before the outcome is recorded, the lease expires and the message is delivered again.
 */
@Injectable()
export class DeliverMessage {
  constructor(
    private readonly messages: MessageRepository,
    private readonly transport: MessageTransport,
    private readonly clock: Clock,
    private readonly settings: MessageDeliverySettings,
    private readonly uow: UnitOfWork,
    private readonly events: EventRecorder,
  ) {}

  /** Throws DeliveryFailedError when the transport fails, so that the queue retries with back-off. */
  async execute({ messageId, attempt, isLast }: DeliveryAttempt): Promise<DeliveryOutcome> {
    const message = await this.messages.findById(messageId);
    if (!message) return 'missing';
    if (message.isSettled) return 'settled';
    try {
      await this.deliverWithin(message, this.settings.deliveryTimeoutMs);
    } catch (error) {
      if (isLast) {
        message.giveUp();
        message.advanceVersion();
      }
      const reason = failureText(error);
      await this.messages.recordAttempt(message, { attempts: attempt, error: reason });
      throw new DeliveryFailedError(messageId, attempt, isLast, reason);
    }
    message.deliver(this.clock.now());
    // Read queued, so its status changes: the version the database gives the stored change (FIRST_VERSION).
    message.advanceVersion();
    // The delivered state and its event commit together (the event only for the first delivery).
    await this.uow.run(async () => {
      const recorded = await this.messages.recordAttempt(message, { attempts: attempt, error: null });
      if (recorded) await this.events.record('message.delivered', message);
    });
    return 'delivered';
  }

  private deliverWithin(message: Message, timeoutMs: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`delivery timed out after ${timeoutMs} ms`)), timeoutMs);
    });
    return Promise.race([this.transport.deliver(message), timeout]).finally(() => clearTimeout(timer));
  }
}

/**
 * The queue gave up on a message (its last attempt failed or its worker died during it): the
 * message becomes `failed`, unless it was delivered or given up already.
 */
@Injectable()
export class GiveUpMessage {
  constructor(private readonly messages: MessageRepository) {}

  async execute(messageId: string): Promise<boolean> {
    const message = await this.messages.findById(messageId);
    if (!message || message.isSettled) return false;
    message.giveUp();
    message.advanceVersion();
    return this.messages.recordAttempt(message, { attempts: 0, error: null });
  }
}

function failureText(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.length > 1000 ? `${text.slice(0, 997)}...` : text;
}
