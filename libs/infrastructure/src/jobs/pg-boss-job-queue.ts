import { Logger } from '@nestjs/common';
import PgBoss from 'pg-boss';
import type { Pool } from 'pg';
import { TransactionHost } from '../database/transaction-host';

export interface JobQueueOptions {
  /**
   * Run pg-boss's upkeep here: expiring the leases of jobs whose worker died, archiving, and the
   * clock that sends scheduled jobs (pg-boss makes each happen once across all instances).
   * Processes that only send jobs leave it off.
   */
  supervise: boolean;
  /** How often the upkeep runs (pg-boss's default: 120 s). */
  maintenanceIntervalSeconds?: number;
}

export interface QueueDefinition {
  name: string;
  /** Attempts after the first one (pg-boss's retryLimit). */
  retryLimit: number;
  /** Seconds before the first retry; doubled (with jitter) for each later one. */
  retryDelaySeconds: number;
  /** A job active for longer is taken as lost (its worker died) and retried. */
  expireInSeconds: number;
  /** Where a job goes once its last attempt failed. */
  deadLetter?: string;
}

export type JobHandler<T> = (job: PgBoss.JobWithMetadata<T>) => Promise<void>;

/** pg-boss keeps jobs waiting for a worker this long (its default, 14 days, could drop some). */
const RETENTION_MINUTES = 365 * 24 * 60;

/**
 * The job queue: pg-boss (SKIP LOCKED fetching, leases that expire, retries with back-off, dead
 * letters, cron schedules run once across instances) in its own schema, `pgboss`, of the service's
 * database, created or migrated at start-up under pg-boss's advisory lock. It runs its SQL on the service's
 * connection pool (DatabasePool), so the process has one pool, and a job can be sent on the connection of the
 * caller's transaction (`sendInTransaction`).
 */
export class PgBossJobQueue {
  readonly boss: PgBoss;
  private readonly logger = new Logger('JobQueue');
  private readonly queues = new Map<string, QueueDefinition>();
  private started = false;

  constructor(pool: Pool, options: JobQueueOptions) {
    const db: PgBoss.Db = { executeSql: (text, values) => pool.query(text, values) as Promise<{ rows: any[] }> };
    this.boss = new PgBoss({
      db,
      supervise: options.supervise,
      schedule: options.supervise,
      // pg-boss tells an option left undefined from one given: pass only those set.
      ...(options.maintenanceIntervalSeconds ? { maintenanceIntervalSeconds: options.maintenanceIntervalSeconds } : {}),
    });
    this.boss.on('error', (error) => this.logger.error(`pg-boss: ${error.message}`));
  }

  /** Creates (or migrates) the pg-boss schema and the queues; dead-letter queues first. */
  async start(queues: QueueDefinition[]): Promise<void> {
    await this.boss.start();
    this.started = true;
    const ordered = [...queues].sort((a, b) => Number(!!a.deadLetter) - Number(!!b.deadLetter));
    for (const queue of ordered) {
      const options: PgBoss.Queue = {
        name: queue.name,
        retryLimit: queue.retryLimit,
        retryDelay: queue.retryDelaySeconds,
        retryBackoff: true,
        expireInSeconds: queue.expireInSeconds,
        retentionMinutes: RETENTION_MINUTES,
        ...(queue.deadLetter ? { deadLetter: queue.deadLetter } : {}),
      };
      await this.boss.createQueue(queue.name, options);
      // createQueue keeps the settings of a queue that exists: apply today's (MESSAGE_MAX_ATTEMPTS, say).
      await this.boss.updateQueue(queue.name, options);
      this.queues.set(queue.name, queue);
    }
  }

  /**
   * Sends a job on the connection of the caller's transaction (pg-boss's `db` option): it commits
   * or rolls back with everything else the transaction did. `id` makes sending idempotent;
   * `startAfter` holds the job until then.
   */
  async sendInTransaction(
    host: TransactionHost,
    queue: string,
    data: object,
    id: string,
    options: { startAfter?: Date } = {},
  ): Promise<void> {
    host.requireTransaction(`A job for "${queue}"`);
    // Through the host, on the transaction's connection: the writes it holds back go first (TransactionHost.hold).
    const db: PgBoss.Db = { executeSql: async (text, values) => ({ rows: await host.query(text, values) }) };
    const sent = await this.boss.send(queue, data, { id, db, ...options });
    if (sent === null)
      throw new Error(`The job queue "${queue}" refused job ${id} (missing queue, or a duplicate id).`);
  }

  /**
   * Sends several jobs of one queue, due at once, in one statement on the connection of the caller's transaction
   * (pg-boss's `insert`, with the queue's own settings): they commit or roll back with the rest of it.
   */
  async sendManyInTransaction(
    host: TransactionHost,
    queue: string,
    jobs: ReadonlyArray<{ id: string; data: object }>,
  ): Promise<void> {
    host.requireTransaction(`Jobs for "${queue}"`);
    if (!jobs.length) return;
    const db: PgBoss.Db = { executeSql: async (text, values) => ({ rows: await host.query(text, values) }) };
    await this.boss.insert(
      jobs.map(({ id, data }) => ({ id, name: queue, data })),
      { db },
    );
  }

  /**
   * Takes jobs of `queue` (SKIP LOCKED: each job goes to one worker of one instance) and runs
   * `handler` on each, outside any transaction. A handler that throws fails its job: pg-boss
   * retries it with back-off, then sends it to the queue's dead letter.
   */
  async work<T>(queue: string, options: { batchSize: number; pollingIntervalSeconds: number }, handler: JobHandler<T>) {
    return this.boss.work<T>(queue, { ...options, includeMetadata: true }, async (jobs) => {
      await Promise.all(
        jobs.map(async (job) => {
          try {
            await handler(job);
          } catch (error) {
            // Failed one by one: the others of the batch are completed when the batch returns. While the queue stops,
            // the pool may close under a handler (its error is that): a failure that cannot be recorded then is left
            // to the job's expiry, which retries it, rather than thrown where nothing awaits it any more.
            await this.boss
              .fail(queue, job.id, { message: (error as Error)?.message ?? String(error) })
              .catch((failed: unknown) => {
                if (this.started) throw failed;
              });
          }
        }),
      );
    });
  }

  /** Sends a job to `queue` on every `cron` tick (UTC), once across all instances. */
  async schedule(queue: string, cron: string): Promise<void> {
    await this.boss.schedule(queue, cron, {}, { tz: 'UTC' });
  }

  /** Jobs waiting (created or waiting for a retry), for the metrics. */
  queueSize(queue: string): Promise<number> {
    return this.boss.getQueueSize(queue, { before: 'active' });
  }

  /** Stops taking jobs, lets the running ones finish for up to `timeoutMs`, then fails the rest (to be retried). */
  async stop(timeoutMs: number): Promise<void> {
    if (!this.started) return;
    this.started = false;
    await this.boss.stop({ graceful: true, wait: true, close: false, timeout: timeoutMs });
  }
}
