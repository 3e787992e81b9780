import { Logger } from '@nestjs/common';
import PgBoss from 'pg-boss';
import type { Pool, QueryConfig } from 'pg';
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

/** The client's own bound on the build (pg's query_timeout): an hour, never a request's seconds. */
const BUILD_TIMEOUT_MS = 3_600_000;

/** The index's name: PostgreSQL cuts a name at 63 bytes, and pg-boss's partition names are 57 long. */
const fetchOrderIndexOf = (partition: string) => `fetch_${partition}`.slice(0, 63);

/**
 * pg-boss 10 fetches `ORDER BY priority DESC, created_on, id` from the jobs waiting (`state < 'active'`), and its
 * own index (job_i5) is on `(name, start_after)`: every fetch read and sorted every waiting job of the queue. With a
 * webhook backlog of 100,000 jobs that was a 170 ms statement with a sort spilled to disk, per fetch (issue 49: the
 * throughput fell as the backlog grew). This index has the fetch's order, so a fetch reads its few rows from the
 * front (0.14 ms at 100,000). Built on the queue's partition (pg-boss partitions `job` by queue), CONCURRENTLY: a
 * running release's writers are not blocked, and its fetches, the same statement, use the index too.
 */
const FETCH_ORDER_INDEX = (partition: string) =>
  `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${fetchOrderIndexOf(partition)} ON pgboss.${partition} ` +
  `(name, priority DESC, created_on, id) WHERE state < 'active'`;

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
  private readonly consumers: Array<{ stop(timeoutMs: number): Promise<void> }> = [];
  private started = false;
  private readonly pool: Pool;

  constructor(pool: Pool, options: JobQueueOptions) {
    const db: PgBoss.Db = { executeSql: (text, values) => pool.query(text, values) as Promise<{ rows: any[] }> };
    this.pool = pool;
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
      await this.indexFetchOrder(queue.name);
    }
  }

  /**
   * The fetch-order index on `queue`'s partition (FETCH_ORDER_INDEX), unless it is there and valid. A build that
   * died (a crash, another instance's start cancelled) leaves an invalid index: dropped and built again. A failure
   * is logged, not thrown: without the index the queue works, only each fetch costs more.
   */
  private async indexFetchOrder(queue: string): Promise<void> {
    // One session for the whole: the advisory lock keeps two instances starting at once from building (or one
    // dropping the other's build in progress as invalid); the one that does not get it leaves the index to the other.
    const client = await this.pool.connect().catch(() => undefined);
    if (!client) return;
    try {
      const { rows } = await client.query<{ partition: string; valid: boolean | null; mine: boolean }>(
        `SELECT q.partition_name AS partition, i.indisvalid AS valid,
                pg_try_advisory_lock(hashtext('petstore_fetch_order_index'), hashtext(q.name)) AS mine
           FROM pgboss.queue q
           LEFT JOIN pg_class c ON c.relname = left('fetch_' || q.partition_name, 63)
             AND c.relnamespace = 'pgboss'::regnamespace
           LEFT JOIN pg_index i ON i.indexrelid = c.oid
          WHERE q.name = $1`,
        [queue],
      );
      const [row] = rows;
      if (!row?.mine) return;
      try {
        // pg-boss names partitions `j` and a hash (hex): checked anyway, as the name goes into the statement.
        if (row.valid || !/^[a-z0-9_]+$/.test(row.partition)) return;
        const started = Date.now();
        if (row.valid === false)
          await client.query(`DROP INDEX CONCURRENTLY IF EXISTS pgboss.${fetchOrderIndexOf(row.partition)}`);
        // A build on a large backlog takes longer than a request's bounds: none for it, the session's back after.
        await client.query('SET statement_timeout = 0');
        await client.query({ text: FETCH_ORDER_INDEX(row.partition), query_timeout: BUILD_TIMEOUT_MS } as QueryConfig);
        await client.query('RESET statement_timeout');
        this.logger.log(`Queue "${queue}": fetch-order index built in ${Date.now() - started} ms`);
      } finally {
        await client.query(`SELECT pg_advisory_unlock(hashtext('petstore_fetch_order_index'), hashtext($1))`, [queue]);
      }
    } catch (error) {
      this.logger.warn(`Queue "${queue}": fetch-order index not built (${(error as Error).message}); fetches sort`);
    } finally {
      client.release();
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
   * Sends several jobs of one queue in one statement on the connection of the caller's transaction (pg-boss's
   * `insert`, which applies the queue's settings as `send` does): a fan-out to 1,000 endpoints sent 1,000 INSERTs.
   */
  async sendManyInTransaction(
    host: TransactionHost,
    queue: string,
    jobs: ReadonlyArray<{ id: string; data: object; startAfter?: Date }>,
  ): Promise<void> {
    host.requireTransaction(`Jobs for "${queue}"`);
    if (jobs.length === 0) return;
    const db: PgBoss.Db = { executeSql: async (text, values) => ({ rows: await host.query(text, values) }) };
    await this.boss.insert(
      jobs.map(({ id, data, startAfter }) => ({ id, name: queue, data, ...(startAfter ? { startAfter } : {}) })),
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

  /**
   * Takes jobs of `queue` continuously, up to `concurrency` in flight, each completed (or failed) on its own as soon as
   * its handler ends. Written here because pg-boss 10's `work()` fetches a batch, waits for its slowest job, then waits
   * out its polling interval: 20 jobs per 0.5 s capped webhook delivery near 40 a second, and one slow receiver held
   * the 19 others (issue 49, item 2). Built on pg-boss's own `fetch`, `complete` and `fail` (SKIP LOCKED, leases,
   * retries and dead letters stay pg-boss's); completions are sent in batches, as many as ended meanwhile.
   */
  consume<T>(
    queue: string,
    options: { concurrency: number; pollingIntervalSeconds: number },
    handler: JobHandler<T>,
  ): void {
    const consumer = new JobConsumer<T>(this.boss, queue, options, handler, this.logger);
    this.consumers.push(consumer);
    consumer.start();
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
    const consumers = this.consumers.splice(0);
    await Promise.all([
      ...consumers.map((consumer) => consumer.stop(timeoutMs)),
      this.boss.stop({ graceful: true, wait: true, close: false, timeout: timeoutMs }),
    ]);
  }
}

/** PgBossJobQueue.consume's loop: fetch what fits, run each job on its own, complete each as it ends. */
class JobConsumer<T> {
  private running = false;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly completed: string[] = [];
  private flushing: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  /** Whether the loop waits for a free slot (a job's end wakes it) rather than for new jobs (only time does). */
  private waitingForSlot = false;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly boss: PgBoss,
    private readonly queue: string,
    private readonly options: { concurrency: number; pollingIntervalSeconds: number },
    private readonly handler: JobHandler<T>,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.running = true;
    this.loop = this.run();
  }

  /** Takes no more jobs; waits up to `timeoutMs` for those in flight; completes what ended. The rest expire. */
  async stop(timeoutMs: number): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([Promise.all(this.inFlight), deadline]);
    clearTimeout(timer);
    await this.flush();
  }

  private async run(): Promise<void> {
    // A fetch is a statement on the queue's table whatever it takes: with jobs in flight, wait until a tenth of the
    // slots are free and take them in one (fetching one job per freed slot cost the database more than the jobs).
    const fetchAtLeast = Math.max(1, Math.floor(this.options.concurrency / 10));
    while (this.running) {
      const free = this.options.concurrency - this.inFlight.size;
      if (free <= 0 || (free < fetchAtLeast && this.inFlight.size > 0)) {
        await this.nextWake(null);
        continue;
      }
      let jobs: PgBoss.JobWithMetadata<T>[] = [];
      try {
        jobs = await this.boss.fetch<T>(this.queue, { batchSize: Math.min(free, 100), includeMetadata: true });
      } catch (error) {
        this.logger.error(`Fetching jobs of "${this.queue}" broke: ${(error as Error)?.message ?? String(error)}`);
      }
      for (const job of jobs ?? []) this.begin(job);
      // Nothing there (or the fetch broke): wait the polling interval, or less if a job ends and frees a slot.
      if (!jobs?.length) await this.nextWake(this.options.pollingIntervalSeconds * 1000);
    }
  }

  private begin(job: PgBoss.JobWithMetadata<T>): void {
    const running: Promise<void> = this.handler(job).then(
      () => {
        this.completed.push(job.id);
        void this.flush();
      },
      (error: unknown) =>
        this.boss.fail(this.queue, job.id, { message: (error as Error)?.message ?? String(error) }).catch((failed) => {
          // Not recorded (the database is away, or the queue is stopping): the job's lease expires and it runs again.
          this.logger.warn(`Failing job ${job.id} of "${this.queue}" broke: ${(failed as Error)?.message}`);
        }),
    );
    const tracked = running.finally(() => {
      this.inFlight.delete(tracked);
      if (this.waitingForSlot) this.wake?.();
    });
    this.inFlight.add(tracked);
  }

  /** Completes the jobs that ended, in one statement per batch; one flush at a time. */
  private flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    this.flushing = (async () => {
      while (this.completed.length > 0) {
        const ids = this.completed.splice(0, 500);
        await this.boss.complete(this.queue, ids).catch((error: unknown) => {
          // Not recorded: these jobs' leases expire and they run again (a delivery's attempt guard records nothing
          // twice, and an attempt already made is settled).
          this.logger.warn(`Completing ${ids.length} jobs of "${this.queue}" broke: ${(error as Error)?.message}`);
        });
      }
    })().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  /** Until `ms` pass, or (null) until a job ends and frees a slot; stop() wakes either. */
  private nextWake(ms: number | null): Promise<void> {
    this.waitingForSlot = ms === null;
    return new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        if (this.wake === done) this.wake = null;
        this.waitingForSlot = false;
        resolve();
      };
      if (ms !== null) timer = setTimeout(done, ms);
      this.wake = done;
    });
  }
}
