import { DynamicModule, INestApplicationContext, Logger, LoggerService, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppConfig } from '../config/app-config';
import { DatabaseModule } from '../database/database.module';
import { MessageWorkerModule } from './message-worker.module';

export interface CreateWorkerOptions {
  config: AppConfig;
  databaseUrl: string;
  logger?: LoggerService | false;
}

/** The composition root of a worker-only process: the database and the message worker, no HTTP. */
@Module({})
class WorkerModule {
  static register({ config, databaseUrl }: CreateWorkerOptions): DynamicModule {
    return {
      module: WorkerModule,
      global: true,
      imports: [DatabaseModule.forRoot(databaseUrl, config), MessageWorkerModule],
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
  const config = new AppConfig({ ...options.config, messageWorker: true });
  return NestFactory.createApplicationContext(WorkerModule.register({ ...options, config }), {
    logger: options.logger ?? new Logger(),
    abortOnError: false,
  });
}
