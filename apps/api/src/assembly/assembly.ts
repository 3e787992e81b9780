import { DynamicModule, INestApplicationContext, Module } from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { PurgeExpiredIdempotencyKeys } from '@petstore/application';
import { AccountsHttpModule, AccountsModule } from '../accounts/accounts.module';
import { ChangeSignalsModule } from '../change-signals/change-signals.module';
import { CatalogueHttpModule, CatalogueModule } from '../catalogue/catalogue.module';
import { ApiKeyGuard } from '../common/auth/api-key.guard';
import { CompressedDocs } from '../common/http/compressed-docs';
import { COMPRESSION_THRESHOLD_BYTES } from '../common/http/http-semantics.hooks';
import { OperationShapeGuard, OperationShapes } from '../common/validation/operation-shapes';
import { applyIdempotencyToWrites } from '../idempotency/idempotent-writes';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { startupNestLogger, RootLogger, silentLogger } from '../common/logging/logging';
import { AppConfig } from '../config/app-config';
import { ConfigModule } from '../config/config.module';
import { DatabaseModule } from '../database/database.module';
import { EVENTS_JOBS, EventsHttpModule, EventsModule } from '../events/events.module';
import { EventRelayModule } from '../events/event-relay.module';
import { HealthController, RedisProbe } from '../health/health.controller';
import { JobQueueModule } from '../jobs/job-queue.module';
import { ScheduledJob, SliceJobs } from '../jobs/scheduled-jobs';
import { DrainModule } from '../common/drain/drain.module';
import {
  MessagingHttpModule,
  MessagingModule,
  MessagingWorkerModule,
  messagingJobs,
} from '../messages/messaging.module';
import { MetricsModule } from '../metrics/metrics.module';
import { ORDERING_JOBS, OrderingHttpModule, OrderingModule } from '../ordering/ordering.module';
import { SeedModule } from '../seed/seed';
import { webhookJobs, WebhooksHttpModule, WebhooksModule, WebhooksWorkerModule } from '../webhooks/webhooks.module';
import { Roles } from './roles';

export interface AssemblyOptions {
  /** What this process runs (roles.ts). */
  roles: Roles;
  config: AppConfig;
  /** The opened, migrated database (main.ts: openDatabase): where the pool connects. */
  databaseUrl: string;
  /** A direct session to it when `databaseUrl` is a transaction pooler (DATABASE_DIRECT_URL); else `databaseUrl`. */
  directDatabaseUrl?: string;
}

/** Expired Idempotency-Key records are purged every ten minutes (IdempotencyModule provides the use case). */
const IDEMPOTENCY_JOBS: SliceJobs = {
  scheduled: [{ name: 'purge-expired-idempotency-keys', cron: '*/10 * * * *', useCase: PurgeExpiredIdempotencyKeys }],
};

/** The slices' HTTP modules (their controllers), for the `http` role; a generated resource is added here. */
const HTTP_SLICES = [
  AccountsHttpModule,
  CatalogueHttpModule,
  OrderingHttpModule,
  MessagingHttpModule,
  WebhooksHttpModule,
  EventsHttpModule,
];

/** Every slice's queues and scheduled jobs. */
function sliceJobs(config: AppConfig): SliceJobs[] {
  return [messagingJobs(config), webhookJobs(config), EVENTS_JOBS, ORDERING_JOBS, IDEMPOTENCY_JOBS];
}

/** The use cases run on a schedule, once across all instances, by a process with the `scheduler` role. */
export function scheduledJobs(config: AppConfig): ScheduledJob[] {
  return sliceJobs(config).flatMap((slice) => slice.scheduled ?? []);
}

/**
 * The one assembly: what a process runs, decided here from its roles. The process-wide modules (configuration,
 * database, metrics: global; the job queue and the change signals: static, with their settings for this process
 * handed through the configuration) and, per role, the slices — catalogue, ordering, accounts,
 * messaging, events, webhooks — with their HTTP controllers (`http`), their workers (`worker`), the scheduled jobs
 * (`scheduler`), or the seed (`seed`). main.ts (the API, `--worker-only`, `--seed`), createApp and the tests
 * are calls of it; `--migrate-only` needs no module at all (main.ts opens, migrates and stops).
 */
@Module({})
export class ProcessModule {
  static compose({ roles, config, databaseUrl, directDatabaseUrl }: AssemblyOptions): DynamicModule {
    const directUrl = directDatabaseUrl ?? databaseUrl;
    const http = roles.has('http');
    const listens = http;
    // Every POST honours Idempotency-Key unless @NotIdempotent(reason): a rule, not a list of operations.
    if (http) applyIdempotencyToWrites(HTTP_SLICES);
    const runsSlices = http || roles.worksJobs;
    return {
      module: ProcessModule,
      imports: [
        // The configuration, and what this process's roles make of the job queue and the change signals: both are
        // static modules, imported by the slices that use them (one instance each), reading their settings here.
        ConfigModule.forRoot(config, [
          JobQueueModule.settings({
            slices: sliceJobs(config),
            supervise: roles.worksJobs,
            schedule: roles.has('scheduler'),
            startupLockUrl: directUrl,
          }),
          // Only a process that serves HTTP keeps caches (API keys, webhook subscribers), so only it listens.
          ChangeSignalsModule.settings({ databaseUrl: directUrl, listen: listens }),
        ]),
        // Only a process that serves HTTP reads from replicas (DATABASE_REPLICA_URLS): workers write, and poll nothing.
        DatabaseModule.forRoot(databaseUrl, config, { readReplicas: http }),
        DrainModule, // the shutdown drain (main.ts starts it; readiness and a Fastify hook read it)
        // Every process runs both, whatever its slices: the queue's schema and queues are created at start-up, and
        // the API key guard reads the key cache.
        JobQueueModule,
        ChangeSignalsModule,
        ...(runsSlices
          ? [
              MetricsModule.register(config, { http }),
              CatalogueModule,
              OrderingModule,
              MessagingModule,
              EventsModule,
              WebhooksModule,
              IdempotencyModule,
            ]
          : []),
        ...(http
          ? [
              AccountsModule, // the guard's bearer strategy
              ...HTTP_SLICES,
            ]
          : []),
        ...(roles.has('worker') ? [MessagingWorkerModule, WebhooksWorkerModule, EventRelayModule] : []),
        // The seed's changes are events too: webhooks subscribe to them wherever events are recorded.
        ...(roles.has('seed') ? [SeedModule, EventsModule, WebhooksModule] : []),
      ],
      controllers: http ? [HealthController] : [],
      providers: http
        ? [
            { provide: APP_GUARD, useClass: ApiKeyGuard },
            // After the key (401/403 first): a parameter or field the operation does not define is a 400.
            { provide: APP_GUARD, useClass: OperationShapeGuard },
            OperationShapes, // loaded from the served description by createApp
            RedisProbe,
            // The documentation's compressed bytes, kept for the life of the process (the pipeline's hook).
            { provide: CompressedDocs, useFactory: () => new CompressedDocs(COMPRESSION_THRESHOLD_BYTES) },
          ]
        : [],
    };
  }
}

export interface ContextOptions extends AssemblyOptions {
  /** The process's pino logger; false logs nothing. */
  logger: RootLogger | false;
}

/** A process without HTTP (`--worker-only`, `--seed`): the slices its roles need, no server. */
export function createContext(options: ContextOptions): Promise<INestApplicationContext> {
  const logger = options.logger === false ? silentLogger() : options.logger;
  return NestFactory.createApplicationContext(ProcessModule.compose(options), {
    logger: startupNestLogger(logger),
    abortOnError: false,
  });
}

/**
 * The message and webhook workers and the scheduled jobs alone, no HTTP (`main.js --worker-only`): any number
 * of such processes may share the database. `close()` stops the workers after their current batch.
 */
export function createWorker(options: Omit<ContextOptions, 'roles'>): Promise<INestApplicationContext> {
  return createContext({ ...options, roles: new Roles(['worker', 'scheduler']) });
}
