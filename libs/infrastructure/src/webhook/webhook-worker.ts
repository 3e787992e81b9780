import { Logger } from '@nestjs/common';
import {
  DeliverWebhook,
  FanOutWebhookEvent,
  GiveUpWebhookDelivery,
  WebhookAttemptResult,
  WebhookSettings,
} from '@petstore/application';
import { PgBossJobQueue, QueueDefinition } from '../jobs/pg-boss-job-queue';
import { WEBHOOK_DELIVERY_QUEUE, WebhookDeliveryJob } from '../jobs/pg-boss-webhook-delivery-queue';
import { WEBHOOK_FAN_OUT_QUEUE } from '../jobs/pg-boss-webhook-fan-out-queue';

/** Dead letters: delivery jobs that broke on every run (the database failed for a long while). */
export const WEBHOOK_GIVE_UP_QUEUE = 'webhook-delivery-given-up';

/**
 * The queues of webhooks. pg-boss's own retries here only cover a run that broke (its worker died,
 * the database failed): a receiver's failure is an attempt recorded, and the next attempt is a new
 * job sent with `startAfter`, on WebhookSettings' schedule (pg-boss's back-off is not a list).
 */
export function webhookQueues(settings: WebhookSettings): QueueDefinition[] {
  return [
    // An event is never dropped: its fan-out is retried (with back-off) for as long as it breaks.
    { name: WEBHOOK_FAN_OUT_QUEUE, retryLimit: 30, retryDelaySeconds: 2, expireInSeconds: 60 },
    { name: WEBHOOK_GIVE_UP_QUEUE, retryLimit: 30, retryDelaySeconds: 5, expireInSeconds: 60 },
    {
      name: WEBHOOK_DELIVERY_QUEUE,
      // 5 s doubling: about 40 minutes of broken runs before the delivery is given up as failed.
      retryLimit: 8,
      deadLetter: WEBHOOK_GIVE_UP_QUEUE,
      retryDelaySeconds: 5,
      // Longer than any attempt may take: past it, the worker is taken as dead and the attempt rerun.
      expireInSeconds: Math.ceil(settings.timeoutMs / 1000) + 30,
    },
  ];
}

/** What a delivery job came to (DeliverWebhook's result), or `given_up` by the dead-letter queue: for the metrics. */
export type WebhookWorkResult = WebhookAttemptResult | 'given_up';

/**
 * This process's webhook workers: fan-out (an event → its deliveries) and delivery (one attempt a
 * job). Any number of processes may run them: pg-boss hands each job to one worker (SKIP LOCKED).
 */
export class WebhookWorker {
  constructor(
    private readonly jobs: PgBossJobQueue,
    private readonly fanOut: FanOutWebhookEvent,
    private readonly deliver: DeliverWebhook,
    private readonly giveUp: GiveUpWebhookDelivery,
    private readonly logger = new Logger('WebhookWorker'),
    private readonly observe: (result: WebhookWorkResult) => void = () => undefined,
    private readonly pollingIntervalSeconds = 0.5,
    /** Deliveries a fan-out deferred (their account's outbound budget was spent): for the metrics. */
    private readonly deferred: (count: number) => void = () => undefined,
  ) {}

  async start(): Promise<void> {
    const polling = { batchSize: 20, pollingIntervalSeconds: this.pollingIntervalSeconds };
    await this.jobs.work<{ eventId: string }>(WEBHOOK_FAN_OUT_QUEUE, polling, async (job) => {
      const { eventId } = job.data;
      const fanned = await this.logged(`Fan-out of webhook event ${eventId}`, () => this.fanOut.run(eventId));
      if (fanned.deferred > 0) this.deferred(fanned.deferred);
    });
    await this.jobs.work<WebhookDeliveryJob>(WEBHOOK_DELIVERY_QUEUE, polling, async (job) => {
      const { deliveryId } = job.data;
      const due = job.data.due ? new Date(job.data.due) : undefined;
      const result = await this.logged(`Webhook delivery ${deliveryId}`, () => this.deliver.execute(deliveryId, due));
      this.observe(result);
      if (result === 'failed') this.logger.warn(`Webhook delivery ${deliveryId} failed: no attempt left`);
    });
    await this.jobs.work<{ deliveryId: number }>(WEBHOOK_GIVE_UP_QUEUE, polling, async (job) => {
      if (await this.giveUp.execute(job.data.deliveryId)) {
        this.observe('given_up');
        this.logger.warn(`Webhook delivery ${job.data.deliveryId} given up: its runs kept breaking`);
      }
    });
  }

  /** A run that throws (the database failed) is logged, then retried by pg-boss. */
  private async logged<T>(what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      this.logger.warn(`${what} broke (retried): ${(error as Error)?.message ?? String(error)}`);
      throw error;
    }
  }
}
