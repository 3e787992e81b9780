import { Injectable } from '@nestjs/common';
import { WebhookFanOutQueue } from '@petstore/application';
import { TransactionHost } from '../database/transaction-host';
import { PgBossJobQueue } from './pg-boss-job-queue';

/** The outbox's fan-out jobs (one per event; the job's id is the event's). */
export const WEBHOOK_FAN_OUT_QUEUE = 'webhook-fan-out';

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
