import { Injectable } from '@nestjs/common';
import { MessageDeliverySettings, MessageQueue } from '@petstore/application';
import { TransactionHost } from '../database/transaction-host';
import { PgBossJobQueue, QueueDefinition } from '../jobs/pg-boss-job-queue';

/** One job per message (the job's id is the message's), worked by the delivery workers. */
export const MESSAGE_DELIVERY_QUEUE = 'message-delivery';
/** Dead letters: jobs of messages whose last attempt failed, or whose worker died during it. */
export const MESSAGE_GIVE_UP_QUEUE = 'message-delivery-given-up';

/** A delivery job's data. */
export interface MessageJob {
  messageId: string;
}

/** The queues of message delivery, as pg-boss should hold them. */
export function messageQueues(settings: MessageDeliverySettings): QueueDefinition[] {
  return [
    { name: MESSAGE_GIVE_UP_QUEUE, retryLimit: 10, retryDelaySeconds: 5, expireInSeconds: 60 },
    {
      name: MESSAGE_DELIVERY_QUEUE,
      retryLimit: settings.maxAttempts - 1,
      // 1 s, then doubling (pg-boss: between d·2^(n−1) and d·2^n seconds before attempt n + 1).
      retryDelaySeconds: 1,
      // A lease longer than any attempt may take: past it, the worker is taken as dead.
      expireInSeconds: Math.ceil(settings.deliveryTimeoutMs / 1000) + 30,
      deadLetter: MESSAGE_GIVE_UP_QUEUE,
    },
  ];
}

/** MessageQueue on pg-boss: the job is inserted by the transaction that stores the message. */
@Injectable()
export class PgBossMessageQueue extends MessageQueue {
  constructor(
    private readonly jobs: PgBossJobQueue,
    private readonly host: TransactionHost,
  ) {
    super();
  }

  enqueue(messageId: string): Promise<void> {
    return this.jobs.sendInTransaction(
      this.host,
      MESSAGE_DELIVERY_QUEUE,
      { messageId } satisfies MessageJob,
      messageId,
    );
  }
}
