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

/** How a process's webhook workers run (WebhooksWorkerModule passes the settings). */
export interface WebhookWorkerOptions {
  logger?: Logger;
  /** What each delivery job came to: for the metrics. */
  observe?: (result: WebhookWorkResult) => void;
  /** Deliveries a fan-out deferred (their account's outbound budget was spent): for the metrics. */
  deferred?: (count: number) => void;
  /** Attempts in flight in this process at most (WEBHOOK_WORKER_CONCURRENCY). */
  concurrency?: number;
  /** How often an idle worker looks for jobs. */
  pollingIntervalSeconds?: number;
}

/**
 * This process's webhook workers: fan-out (an event → its deliveries) and delivery (one attempt a job). Any number of
 * processes may run them: pg-boss hands each job to one worker (SKIP LOCKED). Deliveries and fan-outs are taken
 * continuously, each job completed as it ends (PgBossJobQueue.consume), so a slow receiver holds its own slots only
 * (and at most WEBHOOK_ENDPOINT_CONCURRENCY of them: DeliverWebhook).
 */
export class WebhookWorker {
  private readonly logger: Logger;

  constructor(
    private readonly jobs: PgBossJobQueue,
    private readonly fanOut: FanOutWebhookEvent,
    private readonly deliver: DeliverWebhook,
    private readonly giveUp: GiveUpWebhookDelivery,
    private readonly options: WebhookWorkerOptions = {},
  ) {
    this.logger = options.logger ?? new Logger('WebhookWorker');
  }

  async start(): Promise<void> {
    const { observe = () => undefined, deferred = () => undefined } = this.options;
    const concurrency = this.options.concurrency ?? 100;
    const pollingIntervalSeconds = this.options.pollingIntervalSeconds ?? 0.2;
    // A fan-out is a few statements in one transaction; a tenth of the attempts' slots keeps events flowing.
    const fanOuts = { concurrency: Math.max(1, Math.ceil(concurrency / 10)), pollingIntervalSeconds };
    this.jobs.consume<{ eventId: string }>(WEBHOOK_FAN_OUT_QUEUE, fanOuts, async (job) => {
      const { eventId } = job.data;
      const fanned = await this.logged(`Fan-out of webhook event ${eventId}`, () => this.fanOut.run(eventId));
      if (fanned.deferred > 0) deferred(fanned.deferred);
    });
    this.jobs.consume<WebhookDeliveryJob>(
      WEBHOOK_DELIVERY_QUEUE,
      { concurrency, pollingIntervalSeconds },
      async (job) => {
        const { deliveryId } = job.data;
        const due = job.data.due ? new Date(job.data.due) : undefined;
        const result = await this.logged(`Webhook delivery ${deliveryId}`, () => this.deliver.execute(deliveryId, due));
        observe(result);
        if (result === 'failed') this.logger.warn(`Webhook delivery ${deliveryId} failed: no attempt left`);
      },
    );
    const polling = { batchSize: 20, pollingIntervalSeconds: 0.5 };
    await this.jobs.work<{ deliveryId: number }>(WEBHOOK_GIVE_UP_QUEUE, polling, async (job) => {
      if (await this.giveUp.execute(job.data.deliveryId)) {
        observe('given_up');
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
