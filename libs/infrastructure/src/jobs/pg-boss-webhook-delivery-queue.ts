import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { WebhookDeliveryQueue } from '@petstore/application';
import { TransactionHost } from '../database/transaction-host';
import { PgBossJobQueue } from './pg-boss-job-queue';

/** One job per attempt of a delivery. */
export const WEBHOOK_DELIVERY_QUEUE = 'webhook-delivery';
/** A delivery job's data: `due` (ISO 8601) is the delivery's `next_attempt_at` it is for (absent: any, older jobs). */
export interface WebhookDeliveryJob {
  deliveryId: number;
  due?: string;
}

/** A delivery's attempt jobs, sent in the transaction that records why one is due. */
@Injectable()
export class PgBossWebhookDeliveryQueue extends WebhookDeliveryQueue {
  constructor(
    private readonly host: TransactionHost,
    private readonly jobs: PgBossJobQueue,
  ) {
    super();
  }

  schedule(deliveryId: number, at: Date | null, due?: Date): Promise<void> {
    const options = at ? { startAfter: at } : {};
    const data: WebhookDeliveryJob = due ? { deliveryId, due: due.toISOString() } : { deliveryId };
    return this.jobs.sendInTransaction(this.host, WEBHOOK_DELIVERY_QUEUE, data, randomUUID(), options);
  }

  scheduleMany(deliveryIds: number[], at: Date | null, due?: Date): Promise<void> {
    const data = (deliveryId: number): WebhookDeliveryJob =>
      due ? { deliveryId, due: due.toISOString() } : { deliveryId };
    const jobs = deliveryIds.map((id) => ({ id: randomUUID(), data: data(id), ...(at ? { startAfter: at } : {}) }));
    return this.jobs.sendManyInTransaction(this.host, WEBHOOK_DELIVERY_QUEUE, jobs);
  }

  scheduleNow(jobs: ReadonlyArray<{ deliveryId: number; due: Date }>): Promise<void> {
    return this.jobs.sendManyInTransaction(
      this.host,
      WEBHOOK_DELIVERY_QUEUE,
      jobs.map(({ deliveryId, due }) => ({
        id: randomUUID(),
        data: { deliveryId, due: due.toISOString() } satisfies WebhookDeliveryJob,
      })),
    );
  }
}
