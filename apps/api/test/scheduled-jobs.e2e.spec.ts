import { Client } from 'pg';
import { Clock, ExpireHeldOrders, IdempotencyStore } from '@petstore/application';
import { keyHash, PgBossJobQueue, PgKeyRevocations } from '@petstore/infrastructure';
import { loadConfig, withConfig } from '../src/config/app-config';
import { JobQueueCloser } from '../src/jobs/job-queue.module';
import { createWorker, scheduledJobs } from '../src/assembly/assembly';
import { StoreFixtures } from './support/store-fixtures';
import { TestApp } from './support/test-app';
import { eventually } from './support/eventually';

const SCHEDULED_JOBS = scheduledJobs(loadConfig({}));

jest.setTimeout(30_000);

describe('scheduled jobs on the job queue (HTTP app, real PostgreSQL)', () => {
  let one: TestApp;
  let two: TestApp;

  beforeAll(async () => {
    one = await TestApp.start({ messaging: { worker: true } });
    two = await TestApp.startOn(one.databaseUrl, { messaging: { worker: true } });
  });
  afterAll(async () => {
    await two.close();
    await one.close();
  });

  // Issue 32: not global, but static modules imported by every module that uses them; Nest makes one instance of each.
  it('has one pg-boss and one change listener in a process, however many modules import them', () => {
    expect(one.app.get(PgBossJobQueue, { strict: false, each: true })).toHaveLength(1);
    expect(one.app.get(PgKeyRevocations, { strict: false, each: true })).toHaveLength(1);
  });

  // Issue 49: pg-boss's fetch orders the waiting jobs by priority, creation, id; its own index is by start time, so
  // each fetch sorted the whole backlog (170 ms at 100,000). Each queue's partition gets an index in the fetch's order.
  it("fetches each queue's jobs from an index in the fetch's order, not by sorting the backlog", async () => {
    const queues = await one.sql<{ name: string; partition: string }>(
      // pg-boss's own queue (`__pgboss__send-it`, its cron's) is not one the service defines.
      `SELECT name, partition_name AS partition FROM pgboss.queue WHERE name NOT LIKE '\\_\\_pgboss%' ORDER BY name`,
    );
    expect(queues.map((queue) => queue.name)).toEqual(expect.arrayContaining(['webhook-delivery', 'message-delivery']));
    const indexes = await one.sql<{ name: string }>(
      `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE c.relnamespace = 'pgboss'::regnamespace AND c.relname LIKE 'fetch\\_%' AND i.indisvalid`,
    );
    expect(indexes.map((index) => index.name).sort()).toEqual(
      queues.map((queue) => `fetch_${queue.partition}`.slice(0, 63)).sort(),
    );
    // pg-boss's own statement, planned with sorting discouraged: it reads the index rather than sorting.
    const { fetchNextJob } = jest.requireActual('pg-boss/src/plans') as {
      fetchNextJob: (schema: string) => (options: { includeMetadata: boolean }) => string;
    };
    const fetch = fetchNextJob('pgboss')({ includeMetadata: true });
    const client = new Client({ connectionString: one.databaseUrl });
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL enable_sort = off');
      const plan = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${fetch}`, ['webhook-delivery', 100]);
      const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
      expect(text).toContain(
        `fetch_${queues.find((queue) => queue.name === 'webhook-delivery')!.partition}`.slice(0, 63),
      );
      // (The window over the batch it took still sorts its few rows: not the backlog.)
      expect(text).not.toMatch(/Sort Key:[^\n]*priority/);
    } finally {
      await client.query('ROLLBACK');
      await client.end();
    }
  });

  it('registers each scheduled use case with pg-boss, once however many instances start', async () => {
    const rows = await one.sql(`SELECT name, cron, timezone FROM pgboss.schedule ORDER BY name`);
    const byName = [...SCHEDULED_JOBS].sort((a, b) => (a.name < b.name ? -1 : 1)); // the query's order
    expect(rows).toEqual(byName.map((job) => ({ name: job.name, cron: job.cron, timezone: 'UTC' })));
    expect(SCHEDULED_JOBS.map((job) => job.name)).toContain('purge-expired-idempotency-keys');
  });

  it('purges expired idempotency keys when the job runs, once across the instances', async () => {
    const { id: accountId } = await one.customer('Idem');
    const store = one.app.get(IdempotencyStore);
    const result = { json: '{}', createdResource: null };
    await store.save(accountId, 'expired', { fingerprint: 'f', result, sealed: false }, new Date(Date.now() - 1_000));
    await store.save(accountId, 'current', { fingerprint: 'f', result, sealed: false }, new Date(Date.now() + 60_000));
    // What pg-boss's clock sends on the cron tick.
    const jobs = one.app.get(PgBossJobQueue);
    const jobId = await jobs.boss.send('purge-expired-idempotency-keys', {});
    const keys = async () =>
      (await one.sql(`SELECT key_hash FROM idempotency_keys ORDER BY key_hash`)).map((row) => row['key_hash']);
    await eventually(async () => (await keys()).length === 1, Boolean, 20_000);
    expect(await keys()).toEqual([keyHash('current')]);
    const completed = async () =>
      (await jobs.boss.getJobById('purge-expired-idempotency-keys', jobId ?? ''))?.state === 'completed';
    await eventually(completed, Boolean, 20_000);
    // The job ran once, on one instance. Count ours only: the cron (every 10 minutes) adds its own job when a
    // run crosses the tenth minute, and CI once did.
    const runs = await one.sql(
      `SELECT count(*)::int AS n FROM pgboss.job ` +
        `WHERE name = 'purge-expired-idempotency-keys' AND id = $1 AND state = 'completed'`,
      [jobId],
    );
    expect(runs).toEqual([{ n: 1 }]);
  });

  it('expires held orders every minute when the job runs: units back to stock, once across the instances', async () => {
    expect(SCHEDULED_JOBS).toContainEqual(expect.objectContaining({ name: 'expire-held-orders', cron: '* * * * *' }));
    const store = await StoreFixtures.on(one);
    try {
      const petId = await store.pet({ quantity: 3 });
      const { key } = await one.customer('Forgetful');
      const orderId = await store.placed(key, petId, 3);
      expect(await store.stock(petId)).toEqual({ quantity: 0, status: 'pending' });
      // Both instances' clocks a minute past the hold: whichever worker takes the job sees the order expired.
      const [{ placed }] = await one.sql(`SELECT created_at AS placed FROM orders WHERE id = $1`, [orderId]);
      const later = new Date(placed.getTime() + (loadConfig({}).ordering.orderHoldMinutes + 1) * 60_000);
      for (const app of [one, two]) jest.spyOn(app.app.get(Clock), 'now').mockReturnValue(later);

      const jobs = one.app.get(PgBossJobQueue);
      const jobId = await jobs.boss.send('expire-held-orders', {});
      const job = () => jobs.boss.getJobById('expire-held-orders', jobId ?? '');
      await eventually(async () => (await job())?.state === 'completed');
      expect(await store.ordersOf(petId)).toMatchObject({ open: 0, completed: 0, openUnits: 0, completedUnits: 0 });
      expect(await store.stock(petId)).toEqual({ quantity: 3, status: 'available' });
      // The job ran once, on one instance (the cron may add its own minutely job while this test runs: count ours).
      const runs = await one.sql(
        `SELECT count(*)::int AS n FROM pgboss.job ` +
          `WHERE name = 'expire-held-orders' AND id = $1 AND state = 'completed'`,
        [jobId],
      );
      expect(runs).toEqual([{ n: 1 }]);
    } finally {
      jest.restoreAllMocks();
      await store.close();
    }
  });

  it('has what the order expiry needs in a worker-only process too', async () => {
    const worker = await createWorker({
      config: withConfig(loadConfig({}), { messaging: { worker: false } }),
      databaseUrl: one.databaseUrl,
      logger: false,
    });
    try {
      expect(await worker.get(ExpireHeldOrders).execute()).toEqual({ expired: 0, skipped: 0 });
    } finally {
      await worker.close();
    }
  });

  it("gives the jobs in progress the drain's share of SHUTDOWN_TIMEOUT_MS to finish when the queue stops", async () => {
    const three = await TestApp.startOn(one.databaseUrl, {
      messaging: { worker: true },
      process: { shutdownTimeoutMs: 2_500 },
    });
    const stop = jest.spyOn(three.app.get(PgBossJobQueue), 'stop');
    // 2,500 ms less the closing share (a quarter): the process must exit within the whole of it.
    expect(three.app.get(JobQueueCloser).stopTimeoutMs).toBe(1_875);
    await three.close();
    expect(stop).toHaveBeenCalledWith(1_875);
  });
});
