import {
  BeforeApplicationShutdown,
  DynamicModule,
  Global,
  Inject,
  Injectable,
  Logger,
  Module,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { DatabasePool, PgBossJobQueue, QueueDefinition, withStartupLock } from '@petstore/infrastructure';
import { ConfigPart } from '../config/app-config';
import { InjectConfig } from '../config/config.module';
import { DrainModule } from '../common/drain/drain.module';
import { Drain } from '../common/drain/drain.service';
import { ScheduledJob, SliceJobs } from './scheduled-jobs';

const SCHEDULED_JOBS = Symbol('ScheduledJobs');

/** A scheduled run that fails is not retried: the next tick runs it again. */
function scheduledQueue(job: ScheduledJob): QueueDefinition {
  return { name: job.name, retryLimit: 0, retryDelaySeconds: 0, expireInSeconds: 15 * 60 };
}

/**
 * Runs the slices' scheduled use cases in a process with the `scheduler` role: each cron tick sends one job,
 * across all instances, and one such process runs it.
 */
@Injectable()
export class ScheduledJobsHost implements OnApplicationBootstrap {
  private readonly logger = new Logger('ScheduledJobs');

  constructor(
    @Inject(SCHEDULED_JOBS) private readonly scheduled: ScheduledJob[],
    private readonly jobs: PgBossJobQueue,
    private readonly moduleRef: ModuleRef,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const job of this.scheduled) {
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
    @InjectConfig('process') private readonly settings: ConfigPart<'process'>,
    private readonly drain: Drain,
  ) {}

  /** How long the jobs in progress may still run. */
  get stopTimeoutMs(): number {
    const { shutdownTimeoutMs } = this.settings;
    return this.drain.timeLeft(shutdownTimeoutMs);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.jobs.stop(this.stopTimeoutMs);
  }
}

/**
 * The job queue (pg-boss, in the service's database): started with the application, its schema and the
 * slices' queues created if need be. Global because it is process-wide, as the database it lives in is: one
 * pg-boss per process, which the slices' adapters send to. It knows no feature: the assembly hands it the
 * slices' queues and scheduled jobs, and says whether this process works jobs.
 */
@Global()
@Module({})
export class JobQueueModule {
  static forRoot(options: {
    slices: SliceJobs[];
    supervise: boolean;
    schedule: boolean;
    /** A direct session's URL: pg-boss creates its schema and queues under the start-up lock there. */
    startupLockUrl: string;
  }): DynamicModule {
    const scheduled = options.slices.flatMap((slice) => slice.scheduled ?? []);
    const queues = [...options.slices.flatMap((slice) => slice.queues ?? []), ...scheduled.map(scheduledQueue)];
    return {
      module: JobQueueModule,
      imports: [DrainModule],
      providers: [
        {
          provide: PgBossJobQueue,
          useFactory: async (pool: DatabasePool) => {
            const jobs = new PgBossJobQueue(pool, { supervise: options.supervise });
            // Instances starting together would deadlock creating the same queues: they take turns, as for
            // the migrations.
            await withStartupLock(options.startupLockUrl, () => jobs.start(queues));
            return jobs;
          },
          inject: [DatabasePool],
        },
        JobQueueCloser,
        ...(options.schedule ? [{ provide: SCHEDULED_JOBS, useValue: scheduled }, ScheduledJobsHost] : []),
      ],
      exports: [PgBossJobQueue],
    };
  }
}
