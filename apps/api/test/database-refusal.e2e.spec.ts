import { TEST_DATABASE_ENV, withDatabaseName } from '@petstore/testing';
import { Client } from 'pg';
import { ADMIN_KEY, TestApp, TestResponse } from './support/test-app';

/**
 * A database that is up but refuses work: it does not accept connections (`ALLOW_CONNECTIONS false`, its sessions
 * terminated: SQLSTATE 55000, like 57P03 while starting up or shutting down), or it answers read-only (a demoted
 * primary after a failover: 25006 on every write). Each is 503 `service_unavailable` with `Retry-After`, never
 * a 500; a read-only connection leaves the pool, and the service serves again by itself once the database does.
 * On a database of its own (copied from the run's template), on the test server.
 */
jest.setTimeout(60_000);

describe('the database refuses work (a database of its own on the test server)', () => {
  let admin: Client;
  let databaseUrl: string;
  let database: string;
  let api: TestApp;
  let customer: string;
  let petId: number;

  beforeAll(async () => {
    const serverUrl = process.env[TEST_DATABASE_ENV.serverUrl] as string;
    const template = process.env[TEST_DATABASE_ENV.template] as string;
    database = `petstore_test_refusal_${process.env[TEST_DATABASE_ENV.runId]}_${process.pid}`;
    admin = new Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database} TEMPLATE ${admin.escapeIdentifier(template)}`);
    databaseUrl = withDatabaseName(serverUrl, database);
    api = await TestApp.startOn(databaseUrl, {
      database: { acquireTimeoutMs: 1000, queryTimeoutMs: 2000 },
      auth: { apiKeyCacheSeconds: 0 },
    });
    customer = (await api.customer('Refusal')).key;
    const category = await api.post('/categories', { key: ADMIN_KEY, body: { name: 'Refusal kind' } });
    const pet = await api.post('/pets', {
      key: ADMIN_KEY,
      body: { name: 'Refusal pet', categoryId: category.body.id },
    });
    petId = pet.body.id;
    expect((await api.put(`/store/inventory/${petId}`, { key: ADMIN_KEY, body: { quantity: 50 } })).status).toBe(200);
  });

  afterAll(async () => {
    await admin?.query(`ALTER DATABASE ${database} WITH ALLOW_CONNECTIONS true`).catch(() => undefined);
    await admin?.query(`ALTER DATABASE ${database} RESET default_transaction_read_only`).catch(() => undefined);
    await api?.close();
    await admin?.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    await admin?.end();
  });

  const order = () => api.post('/store/orders', { key: customer, body: { petId, quantity: 1 } });
  const me = () => api.get('/accounts/me', { key: customer });

  function expectUnavailable(answer: TestResponse): void {
    expect({ status: answer.status, code: answer.body?.code }).toEqual({ status: 503, code: 'service_unavailable' });
    expect(answer.body).toEqual({
      code: 'service_unavailable',
      status: 503,
      message: expect.any(String),
      documentationUrl: '/docs/errors#service_unavailable',
    });
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
  }

  async function terminateSessions(): Promise<void> {
    await admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [database],
    );
  }

  async function eventually(request: () => Promise<TestResponse>, status: number): Promise<TestResponse> {
    let answer = await request();
    for (let i = 1; i < 40 && answer.status !== status; i++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      answer = await request();
    }
    return answer;
  }

  it('not accepting connections (ALLOW_CONNECTIONS false, sessions ended): 503 + Retry-After, then 2xx', async () => {
    expect((await order()).status).toBe(201);
    await admin.query(`ALTER DATABASE ${database} WITH ALLOW_CONNECTIONS false`);
    await terminateSessions();
    try {
      // The first requests meet the pool's terminated connections, the next ones a refused connection (55000).
      for (let i = 0; i < 3; i++) {
        expectUnavailable(await order());
        expectUnavailable(await me());
      }
      expect((await api.get('/health/ready')).status).toBe(503);
    } finally {
      await admin.query(`ALTER DATABASE ${database} WITH ALLOW_CONNECTIONS true`);
    }
    expect((await eventually(order, 201)).status).toBe(201);
    expect((await me()).status).toBe(200);
  });

  it('read-only connections (a demoted primary, 25006): 503 + Retry-After, each leaves the pool', async () => {
    expect((await order()).status).toBe(201);
    // New sessions are read-only; the pool's current ones are ended, so it opens read-only ones.
    await admin.query(`ALTER DATABASE ${database} SET default_transaction_read_only = on`);
    await terminateSessions();
    try {
      expect((await eventually(me, 200)).status).toBe(200); // reads still serve (a demoted primary, a standby)
      for (let i = 0; i < 12; i++) expectUnavailable(await order());
    } finally {
      await admin.query(`ALTER DATABASE ${database} RESET default_transaction_read_only`);
    }
    // Writable again: only connections opened from now on are. Every read-only one was dropped by the writes that
    // failed on it, or will be by the next: no request after the first few fails.
    const answers: number[] = [];
    for (let i = 0; i < 15; i++) answers.push((await order()).status);
    expect(answers.slice(-10)).toEqual(Array(10).fill(201));
  });
});
