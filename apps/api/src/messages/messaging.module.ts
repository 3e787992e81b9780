import { Injectable, Logger, Module, OnApplicationBootstrap } from '@nestjs/common';
import {
  DeliverMessage,
  GiveUpMessage,
  MessageDeliverySettings,
  MessageQueries,
  MessageQueue,
  MessageRepository,
  MessageTransport,
  QueueMessage,
} from '@petstore/application';
import {
  DEFAULT_MESSAGE_WORKER_OPTIONS,
  InboxMessageTransport,
  MessageDeliveryWorker,
  messageQueues,
  PgBossJobQueue,
  PgBossMessageQueue,
  PgMessageRepository,
} from '@petstore/infrastructure';
import { Metrics } from '../metrics/metrics';
import { AppConfig, ConfigPart } from '../config/app-config';
import { configToken } from '../config/config.module';
import { SliceJobs } from '../jobs/scheduled-jobs';
import { JobQueueModule } from '../jobs/job-queue.module';
import { EventsModule } from '../events/events.module';
import { MessagesController } from './messages.controller';
import { IdempotencyModule } from '../idempotency/idempotency.module';

/** The message queues, for the job queue. */
export function messagingJobs(config: AppConfig): SliceJobs {
  return { queues: messageQueues(new MessageDeliverySettings(config.messaging.maxAttempts)) };
}

/** Gauges of the message queue (read from the messages when scraped) and the failed attempts of this process. */
@Injectable()
export class MessageQueueMetrics {
  readonly failures;

  constructor(metrics: Metrics, messages: MessageRepository) {
    // One query per scrape for the three gauges; absent from a scrape whose query fails (the database refusing).
    metrics.gaugesFrom('message_queue', () => messages.queueStats(), [
      { name: 'message_queue_depth', help: 'Messages queued, not yet delivered.', value: (stats) => stats.queued },
      {
        name: 'message_queue_oldest_age_seconds',
        help: 'Age of the oldest queued message (0 when none).',
        value: ({ oldestQueuedAt }) =>
          oldestQueuedAt ? Math.max(0, (Date.now() - oldestQueuedAt.getTime()) / 1000) : 0,
      },
      {
        name: 'message_queue_failed_messages',
        help: 'Messages given up after MESSAGE_MAX_ATTEMPTS.',
        value: (stats) => stats.failed,
      },
    ]);
    this.failures = metrics.counter('message_delivery_failures_total', 'Failed delivery attempts in this process.');
  }
}

/**
 * Messages: queued, stored, delivered by the workers through the transport (a delivery records its
 * event through EventRecorder, the events' port), and measured (the queue's gauges, in every
 * process). Its controller and its worker are the two modules below, which the assembly adds for the `http` and
 * `worker` roles.
 */
@Module({
  imports: [EventsModule, JobQueueModule], // PgBossMessageQueue sends to the job queue
  providers: [
    {
      provide: MessageDeliverySettings,
      useFactory: (messaging: ConfigPart<'messaging'>) => new MessageDeliverySettings(messaging.maxAttempts),
      inject: [configToken('messaging')],
    },
    { provide: MessageRepository, useClass: PgMessageRepository },
    { provide: MessageQueue, useClass: PgBossMessageQueue },
    { provide: MessageTransport, useClass: InboxMessageTransport },
    QueueMessage,
    MessageQueries,
    DeliverMessage,
    GiveUpMessage,
    MessageQueueMetrics,
  ],
  exports: [QueueMessage, MessageQueries, DeliverMessage, GiveUpMessage, MessageQueueMetrics],
})
export class MessagingModule {}

/** `/messages` (the `http` role). */
@Module({ imports: [MessagingModule, IdempotencyModule], controllers: [MessagesController] })
export class MessagingHttpModule {}

/** Starts this process's message workers (the `worker` role; the job queue stops them). */
@Injectable()
export class MessageWorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger('MessageWorker');

  constructor(
    private readonly jobs: PgBossJobQueue,
    private readonly deliver: DeliverMessage,
    private readonly giveUp: GiveUpMessage,
    private readonly metrics: MessageQueueMetrics,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const options = { ...DEFAULT_MESSAGE_WORKER_OPTIONS, onFailure: () => this.metrics.failures.inc() };
    await new MessageDeliveryWorker(this.jobs, this.deliver, this.giveUp, options, this.logger).start();
    this.logger.log('Message worker started');
  }
}

/** The message workers (the `worker` role). */
@Module({ imports: [MessagingModule, JobQueueModule], providers: [MessageWorkerHost] })
export class MessagingWorkerModule {}
