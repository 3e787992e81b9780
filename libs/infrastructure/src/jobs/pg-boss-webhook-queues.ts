import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { WebhookDeliveryQueue, WebhookFanOutQueue } from '@petstore/application';
import { TransactionHost } from '../database/transaction-host';
import { PgBossJobQueue } from './pg-boss-job-queue';

/** The outbox's fan-out jobs (one per event; the job's id is the event's). */
export const WEBHOOK_FAN_OUT_QUEUE = 'webhook-fan-out';
/** One job per attempt of a delivery. */
export const WEBHOOK_DELIVERY_QUEUE = 'webhook-delivery';
/** A delivery job's data: `due` (ISO 8601) is the delivery's `next_attempt_at` it is for (absent: any, older jobs). */
export interface WebhookDeliveryJob {
  deliveryId: number;
  due?: string;
}

/** An event's fan-out job, sent on the transaction that records the event (the job's id is the event's). */
@Injectable()
export class PgBossWebhookFanOutQueue extends WebhookFanOutQueue {
  constructor(
    private readonly host: TransactionHost,
    private readonly jobs: PgBossJobQueue,
  ) {
    super();
  }

  schedule(eventId: string): Promise<void> {
    return this.jobs.sendInTransaction(this.host, WEBHOOK_FAN_OUT_QUEUE, { eventId }, eventId);
  }
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
}
