import {
  BeforeApplicationShutdown,
  Global,
  Inject,
  Injectable,
  Logger,
  Module,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { MessageDeliverySettings, WebhookSettings } from '@petstore/application';
import { messageQueues, PgBossJobQueue, QueueDefinition, webhookQueues } from '@petstore/infrastructure';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { SCHEDULED_JOBS, ScheduledJob } from './scheduled-jobs';

/** How long stopping waits for the jobs in progress before failing them (they are retried). */
const STOP_TIMEOUT_MS = 10_000;

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
    if (!this.config.messageWorker) return;
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

/** Stops the job queue (workers first, after their jobs in progress) before the pool closes. */
@Injectable()
export class JobQueueCloser implements BeforeApplicationShutdown {
  constructor(@Inject(PgBossJobQueue) private readonly jobs: PgBossJobQueue) {}

  async beforeApplicationShutdown(): Promise<void> {
    await this.jobs.stop(STOP_TIMEOUT_MS);
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
      useFactory: (config: AppConfig) => new MessageDeliverySettings(config.messageMaxAttempts),
      inject: [AppConfig],
    },
    {
      provide: WebhookSettings,
      useFactory: (config: AppConfig) =>
        new WebhookSettings(config.webhookRetryDelaysMs ?? WebhookSettings.DEFAULT_RETRY_DELAYS_MS),
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
        const jobs = new PgBossJobQueue(dataSource, { supervise: config.messageWorker });
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
