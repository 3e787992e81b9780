import { DynamicModule, INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createRootLogger, nestLogger, RootLogger, silentLogger } from '../common/logging/logging';
import { AppConfig, withConfig } from '../config/app-config';
import { IdempotencyModule } from '../common/idempotency/idempotency.module';
import { CatalogueRepositoriesModule } from '../database/catalogue-repositories.module';
import { DatabaseModule } from '../database/database.module';
import { JobQueueModule } from '../jobs/job-queue.module';
import { MetricsModule } from '../metrics/metrics.module';
import { MessageWorkerModule } from './message-worker.module';
import { WebhookCoreModule } from '../webhooks/webhook-core.module';
import { ChangeSignalsModule } from '../accounts/change-signals.module';

export interface CreateWorkerOptions {
  config: AppConfig;
  databaseUrl: string;
  /** The process's pino logger; false logs nothing. */
  logger?: RootLogger | false;
}

/** The composition root of a worker-only process: the database, the job queue and its workers, no HTTP. */
@Module({})
class WorkerModule {
  static register({ config, databaseUrl }: CreateWorkerOptions): DynamicModule {
    return {
      module: WorkerModule,
      global: true,
      imports: [
        DatabaseModule.forRoot(databaseUrl, config),
        MetricsModule.register(config, { http: false }),
        JobQueueModule,
        // The global ports the scheduled use cases need (SCHEDULED_JOBS).
        IdempotencyModule,
        CatalogueRepositoriesModule,
        MessageWorkerModule,
        // Endpoints disabled by the scheduled job are announced; this process caches no subscribers.
        ChangeSignalsModule.register(databaseUrl, false),
        WebhookCoreModule,
      ],
      providers: [{ provide: AppConfig, useValue: config }],
      exports: [AppConfig],
    };
  }
}

/**
 * Starts the message worker alone (`main.js --worker-only`), to deliver messages from more
 * processes than serve HTTP: any number of them may share the database. The worker runs whatever
 * MESSAGE_WORKER says. `close()` stops it after its current batch.
 */
export async function createWorker(options: CreateWorkerOptions): Promise<INestApplicationContext> {
  const config = withConfig(options.config, { messaging: { worker: true } });
  const logger = options.logger === false ? silentLogger() : (options.logger ?? createRootLogger(config.observability));
  return NestFactory.createApplicationContext(WorkerModule.register({ ...options, config }), {
    logger: nestLogger(logger),
    abortOnError: false,
  });
}
