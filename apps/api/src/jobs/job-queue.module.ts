import {
  BeforeApplicationShutdown,
  Global,
  Inject,
  Injectable,
  Logger,
  Module,
  OnApplicationBootstrap,
  Optional,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { MessageDeliverySettings, WebhookSettings } from '@petstore/application';
import { messageQueues, PgBossJobQueue, QueueDefinition, webhookQueues } from '@petstore/infrastructure';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { Drain } from '../lifecycle/drain.service';
import { SCHEDULED_JOBS, ScheduledJob } from './scheduled-jobs';

/** A scheduled run that fails is not retried: the next tick runs it again. */
function scheduledQueue(job: ScheduledJob): QueueDefinition {
  return { name: job.name, retryLimit: 0, retryDelaySeconds: 0, expireInSeconds: 15 * 60 };
}

/**
 * Runs the scheduled use cases in processes with a worker: each cron tick sends one job, across
 * all instances, and one worker runs it.
 */
@Injectable()
export class ScheduledJobsHost implements OnApplicationBootstrap {
  private readonly logger = new Logger('ScheduledJobs');

  constructor(
    private readonly config: AppConfig,
    private readonly jobs: PgBossJobQueue,
    private readonly moduleRef: ModuleRef,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.messaging.worker) return;
    for (const job of SCHEDULED_JOBS) {
      const useCase = this.moduleRef.get(job.useCase, { strict: false });
      await this.jobs.work(job.name, { batchSize: 1, pollingIntervalSeconds: 5 }, async () => {
        const result = await useCase.execute();
        this.logger.log(`${job.name}: ${JSON.stringify(result) ?? 'done'}`);
      });
      await this.jobs.schedule(job.name, job.cron);
    }
  }
}

/**
 * Stops the job queue (workers first, after their jobs in progress) before the pool closes. The jobs in
 * progress get what is left of SHUTDOWN_TIMEOUT_MS after the HTTP drain (all of it in a worker-only
 * process; pg-boss waits at least 1 s); those still running then fail and are retried.
 */
@Injectable()
export class JobQueueCloser implements BeforeApplicationShutdown {
  constructor(
    @Inject(PgBossJobQueue) private readonly jobs: PgBossJobQueue,
    private readonly config: AppConfig,
    @Optional() private readonly drain?: Drain,
  ) {}

  /** How long the jobs in progress may still run. */
  get stopTimeoutMs(): number {
    const { shutdownTimeoutMs } = this.config.process;
    return this.drain ? this.drain.timeLeft(shutdownTimeoutMs) : shutdownTimeoutMs;
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.jobs.stop(this.stopTimeoutMs);
  }
}

/**
 * The job queue (pg-boss, in the service's database): started with the application, its schema
 * and queues created if need be; the message and webhook queues and the scheduled jobs.
 */
@Global()
@Module({
  providers: [
    {
      provide: MessageDeliverySettings,
      useFactory: (config: AppConfig) => new MessageDeliverySettings(config.messaging.maxAttempts),
      inject: [AppConfig],
    },
    {
      provide: WebhookSettings,
      useFactory: (config: AppConfig) =>
        new WebhookSettings(config.webhooks.retryDelaysMs ?? WebhookSettings.DEFAULT_RETRY_DELAYS_MS),
      inject: [AppConfig],
    },
    {
      provide: PgBossJobQueue,
      useFactory: async (
        dataSource: DataSource,
        config: AppConfig,
        settings: MessageDeliverySettings,
        hooks: WebhookSettings,
      ) => {
        const jobs = new PgBossJobQueue(dataSource, { supervise: config.messaging.worker });
        await jobs.start([...messageQueues(settings), ...webhookQueues(hooks), ...SCHEDULED_JOBS.map(scheduledQueue)]);
        return jobs;
      },
      inject: [DataSource, AppConfig, MessageDeliverySettings, WebhookSettings],
    },
    JobQueueCloser,
    ...SCHEDULED_JOBS.map((job) => job.useCase),
    ScheduledJobsHost,
  ],
  exports: [PgBossJobQueue, MessageDeliverySettings, WebhookSettings],
})
export class JobQueueModule {}
