import { Injectable, Logger, Module, OnApplicationBootstrap } from '@nestjs/common';
import {
  DeliverMessage,
  GiveUpMessage,
  MessageQueue,
  MessageRepository,
  MessageTransport,
} from '@petstore/application';
import {
  DEFAULT_MESSAGE_WORKER_OPTIONS,
  InboxMessageTransport,
  MessageDeliveryWorker,
  PgBossJobQueue,
  PgBossMessageQueue,
  TypeOrmMessageRepository,
} from '@petstore/infrastructure';
import { Metrics } from '../common/metrics/metrics';
import { AppConfig } from '../config/app-config';

/** Gauges of the message queue (read from the messages when scraped) and the failed attempts of this process. */
@Injectable()
export class MessageQueueMetrics {
  readonly failures;
  private stats: ReturnType<MessageRepository['queueStats']> | null = null;

  constructor(metrics: Metrics, messages: MessageRepository) {
    // One query per scrape for the three gauges (a scrape collects them all at once).
    const stats = () => {
      this.stats ??= messages.queueStats().finally(() => (this.stats = null));
      return this.stats;
    };
    metrics.gauge('message_queue_depth', 'Messages queued, not yet delivered.', async () => (await stats()).queued);
    metrics.gauge('message_queue_oldest_age_seconds', 'Age of the oldest queued message (0 when none).', async () => {
      const { oldestQueuedAt } = await stats();
      return oldestQueuedAt ? Math.max(0, (Date.now() - oldestQueuedAt.getTime()) / 1000) : 0;
    });
    metrics.gauge('message_queue_failed_messages', 'Messages given up after MESSAGE_MAX_ATTEMPTS.', async () => {
      return (await stats()).failed;
    });
    this.failures = metrics.counter('message_delivery_failures_total', 'Failed delivery attempts in this process.');
  }
}

/** Starts this process's message workers when MESSAGE_WORKER is on (the job queue stops them). */
@Injectable()
export class MessageWorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger('MessageWorker');

  constructor(
    private readonly config: AppConfig,
    private readonly jobs: PgBossJobQueue,
    private readonly deliver: DeliverMessage,
    private readonly giveUp: GiveUpMessage,
    private readonly metrics: MessageQueueMetrics,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.messaging.worker) return;
    const options = { ...DEFAULT_MESSAGE_WORKER_OPTIONS, onFailure: () => this.metrics.failures.inc() };
    await new MessageDeliveryWorker(this.jobs, this.deliver, this.giveUp, options, this.logger).start();
    this.logger.log('Message worker started');
  }
}

/**
 * The delivery side of messages: the store, the queue (pg-boss, from JobQueueModule), the transport
 * and the workers. Part of the API application (MessagesModule) and, alone, of the worker-only
 * process (`--worker-only`). Needs the global DatabaseModule, JobQueueModule, MetricsModule and AppConfig.
 */
@Module({
  providers: [
    { provide: MessageRepository, useClass: TypeOrmMessageRepository },
    { provide: MessageQueue, useClass: PgBossMessageQueue },
    { provide: MessageTransport, useClass: InboxMessageTransport },
    DeliverMessage,
    GiveUpMessage,
    MessageQueueMetrics,
    MessageWorkerHost,
  ],
  exports: [MessageRepository, MessageQueue],
})
export class MessageWorkerModule {}
