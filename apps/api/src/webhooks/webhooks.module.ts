import { Injectable, Logger, Module, OnApplicationBootstrap } from '@nestjs/common';
import {
  CreateWebhookEndpoint,
  DeleteWebhookEndpoint,
  DeliverWebhook,
  DisableFailingWebhookEndpoints,
  EventLog,
  EventQueries,
  EventRetention,
  FanOutWebhookEvent,
  PurgeEvents,
  RetryWebhookDelivery,
  GiveUpWebhookDelivery,
  PingWebhookEndpoint,
  RotateWebhookSecret,
  SubscriberCache,
  SubscriberCacheSettings,
  WebhookDeliveryQueue,
  WebhookDeliveryRepository,
  WebhookEndpointQueries,
  WebhookEndpointRepository,
  WebhookEvents,
  WebhookOutboxStore,
  UpdateWebhookEndpoint,
  WebhookPayloads,
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
  RandomWebhookSecrets,
  PgWebhookDeliveryRepository,
  PgWebhookEndpointRepository,
  PgWebhookOutboxStore,
  PgEventLog,
  webhookQueues,
  WebhookNetworkSettings,
  WebhookWorker,
} from '@petstore/infrastructure';
import { AppConfig, ConfigPart } from '../config/app-config';
import { configToken, InjectConfig } from '../config/config.module';
import { SliceJobs } from '../jobs/scheduled-jobs';
import { WebhookPayloadShapes } from './webhook-payloads';
import { EventsController } from './events.controller';
import { WebhooksController } from './webhooks.controller';

function webhookSettings(webhooks: ConfigPart<'webhooks'>): WebhookSettings {
  return new WebhookSettings(webhooks.retryDelaysMs ?? WebhookSettings.DEFAULT_RETRY_DELAYS_MS);
}

/** The webhooks' queues and scheduled job, for the job queue. */
export function webhookJobs(config: AppConfig): SliceJobs {
  return {
    queues: webhookQueues(webhookSettings(config.webhooks)),
    scheduled: [
      { name: 'disable-failing-webhook-endpoints', cron: '17 * * * *', useCase: DisableFailingWebhookEndpoints },
      { name: 'purge-events', cron: '41 * * * *', useCase: PurgeEvents },
    ],
  };
}

/**
 * Webhooks: the outbox (WebhookEvents, which the stock, order and message use cases call), the endpoints'
 * use cases, the stores, the network adapters and the delivery use cases. Its controller and its worker are
 * the two modules below, which the assembly adds for the `http` and `worker` roles.
 */
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

@Module({
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
      provide: WebhookNetworkSettings,
      useFactory: (webhooks: ConfigPart<'webhooks'>) => new WebhookNetworkSettings(webhooks.allowPrivate),
      inject: [configToken('webhooks')],
    },
    {
      provide: EventRetention,
      useFactory: (webhooks: ConfigPart<'webhooks'>) => new EventRetention(webhooks.eventRetentionDays),
      inject: [configToken('webhooks')],
    },
    WebhookPayloadShapes,
    { provide: WebhookPayloads, useExisting: WebhookPayloadShapes },
    { provide: EventLog, useClass: PgEventLog },
    { provide: WebhookOutboxStore, useClass: PgWebhookOutboxStore },
    { provide: WebhookEndpointRepository, useClass: PgWebhookEndpointRepository },
    { provide: WebhookDeliveryRepository, useClass: PgWebhookDeliveryRepository },
    { provide: WebhookDeliveryQueue, useClass: PgBossWebhookDeliveryQueue },
    { provide: WebhookSender, useClass: HttpWebhookSender },
    { provide: WebhookUrlPolicy, useClass: DnsWebhookUrlPolicy },
    { provide: WebhookSecrets, useClass: RandomWebhookSecrets },
    { provide: SubscriberCacheSettings, useValue: new SubscriberCacheSettings() },
    SubscriberCache,
    WebhookEvents,
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
    EventQueries,
    RetryWebhookDelivery,
    PurgeEvents,
  ],
  exports: [
    WebhookEvents,
    WebhookPayloadShapes,
    CreateWebhookEndpoint,
    DeleteWebhookEndpoint,
    UpdateWebhookEndpoint,
    RotateWebhookSecret,
    PingWebhookEndpoint,
    WebhookEndpointQueries,
    FanOutWebhookEvent,
    DeliverWebhook,
    GiveUpWebhookDelivery,
    EventQueries,
    RetryWebhookDelivery,
    PurgeEvents,
  ],
})
export class WebhooksModule {}

/** `/webhooks/endpoints` and `/events` (the `http` role). */
@Module({ imports: [WebhooksModule], controllers: [WebhooksController, EventsController] })
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
    @InjectConfig('webhooks') private readonly webhooks: ConfigPart<'webhooks'>,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.webhooks.delivery === 'off') {
      // A restored copy of production (docs/operations.md, "Backup and restore"): the queue is kept, nothing sent.
      this.logger.warn('WEBHOOKS_DELIVERY=off: no webhook is sent by this process; deliveries stay queued');
      return;
    }
    await new WebhookWorker(this.jobs, this.fanOut, this.deliver, this.giveUp, this.logger).start();
    this.logger.log('Webhook worker started');
  }
}

/** The webhook workers (the `worker` role). */
@Module({ imports: [WebhooksModule], providers: [WebhookWorkerHost] })
export class WebhooksWorkerModule {}
