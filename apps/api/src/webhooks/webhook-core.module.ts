import { Global, Injectable, Logger, Module, OnApplicationBootstrap } from '@nestjs/common';
import {
  DeliverWebhook,
  FanOutWebhookEvent,
  GiveUpWebhookDelivery,
  SubscriberCache,
  SubscriberCacheSettings,
  WebhookDeliveryQueue,
  WebhookDeliveryRepository,
  WebhookEndpointRepository,
  WebhookEvents,
  WebhookOutboxStore,
  WebhookPayloads,
  WebhookSecrets,
  WebhookSender,
  WebhookUrlPolicy,
} from '@petstore/application';
import { Message, Order, Pet } from '@petstore/domain';
import {
  DnsWebhookUrlPolicy,
  HttpWebhookSender,
  PgBossJobQueue,
  PgBossWebhookDeliveryQueue,
  RandomWebhookSecrets,
  SqlWebhookDeliveryRepository,
  SqlWebhookEndpointRepository,
  SqlWebhookOutboxStore,
  WebhookNetworkSettings,
  WebhookWorker,
} from '@petstore/infrastructure';
import { AppConfig } from '../config/app-config';
import { MessageDto } from '../messages/message.dto';
import { PetDto } from '../pets/pet.dto';
import { OrderDto } from '../store/order.dto';

/** An event's `data` is the resource exactly as the API's own responses show it. */
@Injectable()
export class ApiWebhookPayloads extends WebhookPayloads {
  order(order: Order): unknown {
    return OrderDto.from(order);
  }
  pet(pet: Pet): unknown {
    return PetDto.from(pet);
  }
  message(message: Message): unknown {
    return MessageDto.from(message);
  }
}

/** Starts this process's webhook workers when MESSAGE_WORKER is on (the job queue stops them). */
@Injectable()
export class WebhookWorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger('WebhookWorker');

  constructor(
    private readonly config: AppConfig,
    private readonly jobs: PgBossJobQueue,
    private readonly fanOut: FanOutWebhookEvent,
    private readonly deliver: DeliverWebhook,
    private readonly giveUp: GiveUpWebhookDelivery,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.messaging.worker) return;
    await new WebhookWorker(this.jobs, this.fanOut, this.deliver, this.giveUp, this.logger).start();
    this.logger.log('Webhook worker started');
  }
}

/**
 * Webhooks' outbox (WebhookEvents, which the order, pet and message use cases call), stores,
 * network adapters and workers: global, part of the API and of a worker-only process. Needs the
 * global DatabaseModule, JobQueueModule, CatalogueRepositoriesModule, ChangeSignalsModule and AppConfig.
 */
@Global()
@Module({
  providers: [
    {
      provide: WebhookNetworkSettings,
      useFactory: (config: AppConfig) => new WebhookNetworkSettings(config.webhooks.allowPrivate),
      inject: [AppConfig],
    },
    { provide: WebhookPayloads, useClass: ApiWebhookPayloads },
    { provide: WebhookOutboxStore, useClass: SqlWebhookOutboxStore },
    { provide: WebhookEndpointRepository, useClass: SqlWebhookEndpointRepository },
    { provide: WebhookDeliveryRepository, useClass: SqlWebhookDeliveryRepository },
    { provide: WebhookDeliveryQueue, useClass: PgBossWebhookDeliveryQueue },
    { provide: WebhookSender, useClass: HttpWebhookSender },
    { provide: WebhookUrlPolicy, useClass: DnsWebhookUrlPolicy },
    { provide: WebhookSecrets, useClass: RandomWebhookSecrets },
    { provide: SubscriberCacheSettings, useValue: new SubscriberCacheSettings() },
    SubscriberCache,
    WebhookEvents,
    FanOutWebhookEvent,
    DeliverWebhook,
    GiveUpWebhookDelivery,
    WebhookWorkerHost,
  ],
  exports: [
    WebhookEvents,
    SubscriberCache,
    WebhookOutboxStore,
    WebhookEndpointRepository,
    WebhookDeliveryRepository,
    WebhookUrlPolicy,
    WebhookSecrets,
  ],
})
export class WebhookCoreModule {}
