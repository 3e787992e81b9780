import { IdempotencyStore } from '@petstore/application';
import { PgBossJobQueue } from '@petstore/infrastructure';
import { SCHEDULED_JOBS } from '../src/jobs/scheduled-jobs';
import { TestApp } from './support/test-app';

jest.setTimeout(30_000);

async function eventually(condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('scheduled jobs on the job queue (HTTP app, real PostgreSQL)', () => {
  let one: TestApp;
  let two: TestApp;

  beforeAll(async () => {
    one = await TestApp.start({ messageWorker: true });
    two = await TestApp.startOn(one.databaseUrl, { messageWorker: true });
  });
  afterAll(async () => {
    await two.close();
    await one.close();
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
    const response = { status: 202, body: {}, headers: {} };
    await store.save(accountId, 'expired', { fingerprint: 'f', response }, new Date(Date.now() - 1_000));
    await store.save(accountId, 'current', { fingerprint: 'f', response }, new Date(Date.now() + 60_000));
    // What pg-boss's clock sends on the cron tick.
    const jobs = one.app.get(PgBossJobQueue);
    const jobId = await jobs.boss.send('purge-expired-idempotency-keys', {});
    const keys = async () => (await one.sql(`SELECT key FROM idempotency_keys ORDER BY key`)).map((row) => row['key']);
    await eventually(async () => (await keys()).length === 1);
    expect(await keys()).toEqual(['current']);
    await eventually(async () => (await jobs.boss.getJobById('purge-expired-idempotency-keys', jobId ?? ''))?.state === 'completed');
    const runs = await one.sql(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'purge-expired-idempotency-keys'`);
    expect(runs).toEqual([{ n: 1 }]);
  });
});
