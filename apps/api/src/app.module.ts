import { DynamicModule, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AccountsModule } from './accounts/accounts.module';
import { CategoriesModule } from './categories/categories.module';
import { ApiKeyGuard } from './common/auth/api-key.guard';
import { AppConfig } from './config/app-config';
import { CatalogueRepositoriesModule } from './database/catalogue-repositories.module';
import { DatabaseModule } from './database/database.module';
import { Drain } from './lifecycle/drain.service';
import { HealthController, RedisProbe } from './health/health.controller';
import { PetsModule } from './pets/pets.module';
import { IdempotencyModule } from './common/idempotency/idempotency.module';
import { MessagesModule } from './messages/messages.module';
import { StoreModule } from './store/store.module';

export interface AppModuleOptions {
  config: AppConfig;
  databaseUrl: string;
}

/** The composition root: binds every port to its adapter and every route to its use case. */
@Module({})
export class AppModule {
  static register({ config, databaseUrl }: AppModuleOptions): DynamicModule {
    return {
      module: AppModule,
      global: true,
      imports: [DatabaseModule.forRoot(databaseUrl), IdempotencyModule, AccountsModule, CategoriesModule, CatalogueRepositoriesModule, PetsModule, MessagesModule, StoreModule],
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
