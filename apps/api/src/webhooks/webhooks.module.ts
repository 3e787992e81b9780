import { Injectable, Logger, Module, OnApplicationBootstrap, Optional } from '@nestjs/common';
import {
  CreateWebhookEndpoint,
  DeleteWebhookEndpoint,
  DeliverWebhook,
  DisableFailingWebhookEndpoints,
  FanOutWebhookEvent,
  RecoverWebhookDeliveries,
  RetryWebhookDelivery,
  GiveUpWebhookDelivery,
  PingWebhookEndpoint,
  WebhookFanOut,
  WebhookFanOutQueue,
  RotateWebhookSecret,
  SubscriberCache,
  SubscriberCacheSettings,
  WebhookDeliveryQueue,
  WebhookDeliveryRepository,
  WebhookDeliverySwitch,
  WebhookEndpointConcurrency,
  WebhookEndpointQueries,
  WebhookEndpointRepository,
  WebhookOutboundBudget,
  WebhookOutboundSettings,
  WebhookQueueStats,
  UpdateWebhookEndpoint,
  WebhookRotationSettings,
  WebhookSecrets,
  WebhookSender,
  WebhookSettings,
  WebhookUrlPolicy,
} from '@petstore/application';
import {
  DnsWebhookUrlPolicy,
  HttpWebhookSender,
  PgBossJobQueue,
  PgBossWebhookDeliveryQueue,
  PgBossWebhookFanOutQueue,
  RandomWebhookSecrets,
  PgWebhookDeliveryRepository,
  PgWebhookEndpointRepository,
  PgWebhookOutboundBudget,
  WEBHOOK_FAN_OUT_QUEUE,
  webhookQueues,
  WebhookNetworkSettings,
  WebhookWorker,
  WebhookWorkResult,
} from '@petstore/infrastructure';
import { Counter } from 'prom-client';
import { Metrics } from '../metrics/metrics';
import { JobQueueModule } from '../jobs/job-queue.module';
import { ChangeSignalsModule } from '../change-signals/change-signals.module';
import { AppConfig, ConfigPart } from '../config/app-config';
import { configToken, InjectConfig } from '../config/config.module';
import { SliceJobs } from '../jobs/scheduled-jobs';
import { EventsModule } from '../events/events.module';
import { AccountRepositoryModule } from '../accounts/accounts.module';
import { WebhooksController } from './webhooks.controller';
import { IdempotencyModule } from '../idempotency/idempotency.module';

function webhookSettings(webhooks: ConfigPart<'webhooks'>): WebhookSettings {
  return new WebhookSettings(webhooks.retryDelaysMs ?? WebhookSettings.DEFAULT_RETRY_DELAYS_MS);
}

/** The webhooks' queues and scheduled job, for the job queue. */
export function webhookJobs(config: AppConfig): SliceJobs {
  return {
    queues: webhookQueues(webhookSettings(config.webhooks)),
    scheduled: [
      { name: 'disable-failing-webhook-endpoints', cron: '17 * * * *', useCase: DisableFailingWebhookEndpoints },
    ],
  };
}

/** One warning line at start-up when WEBHOOKS_ALLOW_PRIVATE=true (logged once the process's logger is set). */
@Injectable()
export class UnsafeWebhookNetworkWarning implements OnApplicationBootstrap {
  constructor(private readonly settings: WebhookNetworkSettings) {}

  onApplicationBootstrap(): void {
    if (!this.settings.allowPrivate) return;
    new Logger('Webhooks').warn(
      'WEBHOOKS_ALLOW_PRIVATE=true: webhooks may go to http:// URLs and to private, loopback and link-local ' +
        'addresses. Unsafe outside development: a customer can make this service POST inside your network.',
    );
  }
}

/**
 * WEBHOOKS_DELIVERY=off (a restored copy of production, docs/operations.md "Backup and restore"): one warning line at
 * start-up, in every process that has the setting (API or worker), counting the deliveries held: pending ones, which
 * no process of this copy sends. Pings and retries are refused meanwhile (`webhook_delivery_off`).
 */
@Injectable()
export class HeldWebhooksNotice implements OnApplicationBootstrap {
  constructor(
    private readonly sending: WebhookDeliverySwitch,
    private readonly deliveries: WebhookDeliveryRepository,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.sending.on) return;
    const { pending } = await this.deliveries.queueStats();
    new Logger('Webhooks').warn(
      `WEBHOOKS_DELIVERY=off: no webhook is sent by this process; ${pending} pending ` +
        `${pending === 1 ? 'delivery is' : 'deliveries are'} held (pings and retries are refused: ` +
        'webhook_delivery_off)',
    );
  }
}

/**
 * Gauges of the webhook queue, read from the deliveries and endpoints when scraped (one statement on two partial
 * indexes, shared by the four gauges of one scrape), and the failures of this process's workers. Without the
 * metrics registry (the seed process) there is nothing to observe: the counters are then nowhere.
 */
@Injectable()
export class WebhookQueueMetrics {
  /** Failed attempts (the receiver's error, a timeout, an unreachable URL), retried or not. */
  readonly failures?: Counter;
  /** Deliveries given up for good: no attempt left, endpoint disabled, or their runs kept breaking. */
  readonly givenUp?: Counter;
  /** Deliveries the fan-out deferred: their account's outbound budget was spent (WEBHOOK_DELIVERIES_PER_MINUTE). */
  readonly deferred?: Counter;
  /** Attempts put off because their endpoint had all its slots in this process (WEBHOOK_ENDPOINT_CONCURRENCY). */
  readonly attemptsDeferred?: Counter;

  constructor(deliveries: WebhookDeliveryRepository, jobs: PgBossJobQueue, @Optional() metrics?: Metrics) {
    if (!metrics) return;
    // The events waiting for their fan-out (issue 49: with no worker running they waited and no gauge moved). A count
    // of the fan-out queue's waiting jobs in pg-boss's table, small unless the workers are behind.
    metrics.gaugesFrom<number>('webhook_fan_out', () => jobs.queueSize(WEBHOOK_FAN_OUT_QUEUE), [
      {
        name: 'webhook_fan_outs_pending',
        help: 'Events waiting for their webhook fan-out (deliveries not created yet): grows while no worker runs.',
        value: (waiting) => waiting,
      },
    ]);
    // Absent from a scrape whose statement fails (the database refusing): metrics_scrape_error{source} says so.
    metrics.gaugesFrom<WebhookQueueStats>('webhook_queue', () => deliveries.queueStats(), [
      {
        name: 'webhook_deliveries_pending',
        help: 'Webhook deliveries not delivered nor given up: due, or waiting for their next attempt.',
        value: (stats) => stats.pending,
      },
      {
        name: 'webhook_deliveries_retrying',
        help: 'Pending webhook deliveries whose attempts so far failed.',
        value: (stats) => stats.retrying,
      },
      {
        name: 'webhook_deliveries_oldest_due_age_seconds',
        help:
          'How long the pending delivery due first has been due (0 when none is due): ' +
          'grows while no worker delivers.',
        value: ({ earliestDueAt }) => (earliestDueAt ? Math.max(0, (Date.now() - earliestDueAt.getTime()) / 1000) : 0),
      },
      {
        name: 'webhook_endpoints_failing',
        help: 'Enabled webhook endpoints whose deliveries fail now (disabled after the failing period).',
        value: (stats) => stats.failingEndpoints,
      },
    ]);
    this.failures = metrics.counter('webhook_delivery_failures_total', 'Failed webhook attempts in this process.');
    this.givenUp = metrics.counter(
      'webhook_deliveries_failed_total',
      'Webhook deliveries given up (failed) in this process: no attempt left, endpoint disabled, runs broken.',
    );
    this.attemptsDeferred = metrics.counter(
      'webhook_attempts_deferred_total',
      "Webhook attempts put off a moment: their endpoint's slots (WEBHOOK_ENDPOINT_CONCURRENCY) were all taken.",
    );
    this.deferred = metrics.counter(
      'webhook_deliveries_deferred_total',
      "Webhook deliveries this process's fan-out made start later: their account's outbound budget was spent.",
    );
  }
}

/**
 * Webhooks: a consumer of the events (WebhookFanOut subscribes to them: a fan-out job for each fact some endpoint may
 * receive), the endpoints' use cases, the stores, the network adapters and the delivery use cases. Webhooks depend
 * on events, never the reverse. Its controller and its worker are the two modules below, which the assembly adds for
 * the `http` and `worker` roles.
 */
@Module({
  // The job queue (its adapters send fan-out and delivery jobs); the endpoint changes between instances; the
  // accounts' repository (an owner's endpoints are counted under its account row's lock).
  imports: [EventsModule, JobQueueModule, ChangeSignalsModule, AccountRepositoryModule],
  providers: [
    UnsafeWebhookNetworkWarning,
    {
      provide: WebhookSettings,
      useFactory: (webhooks: ConfigPart<'webhooks'>) => webhookSettings(webhooks),
      inject: [configToken('webhooks')],
    },
    {
      provide: WebhookRotationSettings,
      useFactory: (webhooks: ConfigPart<'webhooks'>) =>
        new WebhookRotationSettings(webhooks.secretRotationWindowSeconds),
      inject: [configToken('webhooks')],
    },
    {
      provide: WebhookDeliverySwitch,
      useFactory: (webhooks: ConfigPart<'webhooks'>) => new WebhookDeliverySwitch(webhooks.delivery === 'on'),
      inject: [configToken('webhooks')],
    },
    HeldWebhooksNotice,
    {
      provide: WebhookNetworkSettings,
      useFactory: (webhooks: ConfigPart<'webhooks'>) => new WebhookNetworkSettings(webhooks.allowPrivate),
      inject: [configToken('webhooks')],
    },
    { provide: WebhookEndpointRepository, useClass: PgWebhookEndpointRepository },
    { provide: WebhookDeliveryRepository, useClass: PgWebhookDeliveryRepository },
    {
      provide: WebhookOutboundSettings,
      useFactory: (webhooks: ConfigPart<'webhooks'>) => new WebhookOutboundSettings(webhooks.deliveriesPerMinute),
      inject: [configToken('webhooks')],
    },
    { provide: WebhookOutboundBudget, useClass: PgWebhookOutboundBudget },
    {
      provide: WebhookEndpointConcurrency,
      useFactory: (webhooks: ConfigPart<'webhooks'>) => new WebhookEndpointConcurrency(webhooks.endpointConcurrency),
      inject: [configToken('webhooks')],
    },
    { provide: WebhookDeliveryQueue, useClass: PgBossWebhookDeliveryQueue },
    { provide: WebhookFanOutQueue, useClass: PgBossWebhookFanOutQueue },
    { provide: WebhookSender, useClass: HttpWebhookSender },
    { provide: WebhookUrlPolicy, useClass: DnsWebhookUrlPolicy },
    { provide: WebhookSecrets, useClass: RandomWebhookSecrets },
    { provide: SubscriberCacheSettings, useValue: new SubscriberCacheSettings() },
    SubscriberCache,
    WebhookFanOut,
    CreateWebhookEndpoint,
    DeleteWebhookEndpoint,
    UpdateWebhookEndpoint,
    RotateWebhookSecret,
    PingWebhookEndpoint,
    WebhookEndpointQueries,
    FanOutWebhookEvent,
    DeliverWebhook,
    GiveUpWebhookDelivery,
    DisableFailingWebhookEndpoints,
    RetryWebhookDelivery,
    RecoverWebhookDeliveries,
    WebhookQueueMetrics,
  ],
  exports: [
    CreateWebhookEndpoint,
    DeleteWebhookEndpoint,
    UpdateWebhookEndpoint,
    RotateWebhookSecret,
    PingWebhookEndpoint,
    WebhookEndpointQueries,
    FanOutWebhookEvent,
    DeliverWebhook,
    GiveUpWebhookDelivery,
    RetryWebhookDelivery,
    RecoverWebhookDeliveries,
    WebhookQueueMetrics,
  ],
})
export class WebhooksModule {}

/** `/webhooks/endpoints` (the `http` role). */
@Module({ imports: [WebhooksModule, IdempotencyModule], controllers: [WebhooksController] })
export class WebhooksHttpModule {}

/** Starts this process's webhook workers (the `worker` role; the job queue stops them). */
@Injectable()
export class WebhookWorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger('WebhookWorker');

  constructor(
    private readonly jobs: PgBossJobQueue,
    private readonly fanOut: FanOutWebhookEvent,
    private readonly deliver: DeliverWebhook,
    private readonly giveUp: GiveUpWebhookDelivery,
    private readonly metrics: WebhookQueueMetrics,
    @InjectConfig('webhooks') private readonly webhooks: ConfigPart<'webhooks'>,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    // A restored copy of production (docs/operations.md, "Backup and restore"): the queue is kept, nothing sent
    // (HeldWebhooksNotice says so, with the count held).
    if (this.webhooks.delivery === 'off') return;
    const observe = (result: WebhookWorkResult) => {
      if (result === 'deferred') this.metrics.attemptsDeferred?.inc();
      if (result === 'retrying' || result === 'failed') this.metrics.failures?.inc();
      if (result === 'failed' || result === 'given_up') this.metrics.givenUp?.inc();
    };
    const deferred = (count: number) => this.metrics.deferred?.inc(count);
    await new WebhookWorker(this.jobs, this.fanOut, this.deliver, this.giveUp, {
      logger: this.logger,
      observe,
      deferred,
      concurrency: this.webhooks.workerConcurrency,
    }).start();
    this.logger.log('Webhook worker started');
  }
}

/** The webhook workers (the `worker` role). */
@Module({ imports: [WebhooksModule, JobQueueModule], providers: [WebhookWorkerHost] })
export class WebhooksWorkerModule {}
