import { DynamicModule, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { LoggerModule } from 'nestjs-pino';
import { AccountsModule } from './accounts/accounts.module';
import { CategoriesModule } from './categories/categories.module';
import { ApiKeyGuard } from './common/auth/api-key.guard';
import { httpLoggerParams, RootLogger } from './common/logging/logging';
import { AppConfig } from './config/app-config';
import { CatalogueRepositoriesModule } from './database/catalogue-repositories.module';
import { DatabaseModule } from './database/database.module';
import { HealthController, RedisProbe } from './health/health.controller';
import { JobQueueModule } from './jobs/job-queue.module';
import { MetricsModule } from './metrics/metrics.module';
import { Drain } from './lifecycle/drain.service';
import { PetsModule } from './pets/pets.module';
import { IdempotencyModule } from './common/idempotency/idempotency.module';
import { MessagesModule } from './messages/messages.module';
import { StoreModule } from './store/store.module';
import { WebhookCoreModule } from './webhooks/webhook-core.module';
import { ChangeSignalsModule } from './accounts/change-signals.module';
import { WebhooksModule } from './webhooks/webhooks.module';

export interface AppModuleOptions {
  config: AppConfig;
  databaseUrl: string;
  /** The process's logger (request lines through nestjs-pino, application logs). */
  logger: RootLogger;
}

/** The composition root: binds every port to its adapter and every route to its use case. */
@Module({})
export class AppModule {
  static register({ config, databaseUrl, logger }: AppModuleOptions): DynamicModule {
    return {
      module: AppModule,
      global: true,
      imports: [
        LoggerModule.forRoot(httpLoggerParams(logger)),
        DatabaseModule.forRoot(databaseUrl, config),
        MetricsModule.register(config, { http: true }),
        JobQueueModule,
        IdempotencyModule,
        ChangeSignalsModule.register(databaseUrl, true),
        AccountsModule.register(),
        CategoriesModule,
        CatalogueRepositoriesModule,
        PetsModule,
        MessagesModule,
        StoreModule,
        WebhookCoreModule,
        WebhooksModule,
      ],
      controllers: [HealthController],
      providers: [
        { provide: AppConfig, useValue: config },
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        Drain, // the shutdown drain (main.ts starts it; readiness and a Fastify hook read it)
        RedisProbe,
      ],
      exports: [AppConfig, Drain],
    };
  }
}
