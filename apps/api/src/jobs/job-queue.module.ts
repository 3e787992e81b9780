import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  Module,
  OnApplicationBootstrap,
  ValueProvider,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { DatabasePool, PgBossJobQueue, QueueDefinition, withStartupLock } from '@petstore/infrastructure';
import { ConfigPart } from '../config/app-config';
import { InjectConfig } from '../config/config.module';
import { DrainModule } from '../common/drain/drain.module';
import { Drain, shutdownShares } from '../common/drain/drain.service';
import { ScheduledJob, SliceJobs } from './scheduled-jobs';

/**
 * What the job queue does in this process, decided by the assembly from its roles and handed to it through the
 * global ConfigModule (JobQueueModule.settings): the module is static, so every module that uses the queue imports
 * it and Nest makes one instance of it, which reads these.
 */
export abstract class JobQueueSettings {
  /** The slices' queues and scheduled jobs. */
  abstract readonly slices: SliceJobs[];
  /** Whether this process works jobs: pg-boss supervises (maintenance, cron) (the `worker` or `scheduler` role). */
  abstract readonly supervise: boolean;
  /** Whether this process runs the scheduled jobs (the `scheduler` role). */
  abstract readonly schedule: boolean;
  /** A direct session's URL: pg-boss creates its schema and queues under the start-up lock there. */
  abstract readonly startupLockUrl: string;
}

function scheduledJobsOf(settings: JobQueueSettings): ScheduledJob[] {
  return settings.slices.flatMap((slice) => slice.scheduled ?? []);
}

/** A scheduled run that fails is not retried: the next tick runs it again. */
function scheduledQueue(job: ScheduledJob): QueueDefinition {
  return { name: job.name, retryLimit: 0, retryDelaySeconds: 0, expireInSeconds: 15 * 60 };
}

/** Every queue the slices declare, and one per scheduled job. */
function queuesOf(settings: JobQueueSettings): QueueDefinition[] {
  return [...settings.slices.flatMap((slice) => slice.queues ?? []), ...scheduledJobsOf(settings).map(scheduledQueue)];
}

/**
 * Runs the slices' scheduled use cases in a process with the `scheduler` role: each cron tick sends one job,
 * across all instances, and one such process runs it. In any other process it does nothing.
 */
@Injectable()
export class ScheduledJobsHost implements OnApplicationBootstrap {
  private readonly logger = new Logger('ScheduledJobs');

  constructor(
    @Inject(JobQueueSettings) private readonly settings: JobQueueSettings,
    private readonly jobs: PgBossJobQueue,
    private readonly moduleRef: ModuleRef,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.settings.schedule) return;
    for (const job of scheduledJobsOf(this.settings)) {
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
 * progress get what is left of the drain's share of SHUTDOWN_TIMEOUT_MS (`shutdownShares`) after the HTTP drain
 * (all of it in a worker-only process; pg-boss waits at least 1 s); those still running then fail and are retried.
 */
@Injectable()
export class JobQueueCloser implements BeforeApplicationShutdown {
  constructor(
    @Inject(PgBossJobQueue) private readonly jobs: PgBossJobQueue,
    @InjectConfig('process') private readonly settings: ConfigPart<'process'>,
    private readonly drain: Drain,
  ) {}

  /** How long the jobs in progress may still run. */
  get stopTimeoutMs(): number {
    return this.drain.timeLeft(shutdownShares(this.settings.shutdownTimeoutMs).drainMs);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.jobs.stop(this.stopTimeoutMs);
  }
}

/**
 * The job queue (pg-boss, in the service's database): started with the application, its schema and the
 * slices' queues created if need be. Process-wide, as the database it lives in is: one pg-boss per process, which
 * the slices' adapters send to. Not global: a static module, imported by the modules whose adapters and workers use
 * it (messaging, webhooks) and by the assembly, one instance however many import it. It knows no feature: the
 * assembly hands it the slices' queues and scheduled jobs, and says whether this process works jobs, as
 * JobQueueSettings through the configuration (JobQueueModule.settings).
 */
@Module({
  imports: [DrainModule],
  providers: [
    {
      provide: PgBossJobQueue,
      useFactory: async (pool: DatabasePool, settings: JobQueueSettings) => {
        const jobs = new PgBossJobQueue(pool, { supervise: settings.supervise });
        // Instances starting together would deadlock creating the same queues: they take turns, as for
        // the migrations.
        await withStartupLock(settings.startupLockUrl, () => jobs.start(queuesOf(settings)));
        return jobs;
      },
      inject: [DatabasePool, JobQueueSettings],
    },
    JobQueueCloser,
    ScheduledJobsHost,
  ],
  exports: [PgBossJobQueue],
})
export class JobQueueModule {
  /** This process's settings, for ConfigModule.forRoot (the assembly). */
  static settings(settings: JobQueueSettings): ValueProvider<JobQueueSettings> {
    return { provide: JobQueueSettings, useValue: settings };
  }
}
