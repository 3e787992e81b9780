import { randomUUID } from 'node:crypto';
import { createServer, IncomingHttpHeaders } from 'node:http';
import { AddressInfo } from 'node:net';
import { TEST_DATABASE_ENV, TEST_DATABASE_PREFIX, withDatabaseName } from '@petstore/testing';
import { Client } from 'pg';
import { ApiProcess, ensureBuilt } from './support/built-app';
import { eventually } from './support/eventually';
import type { TestResponse } from './support/test-app';

// Building (when run without CI's build first) and starting two processes take a while.
jest.setTimeout(240_000);

const ADMIN_KEY = `instances-admin-${randomUUID()}`;
const RATE_LIMIT_PER_MINUTE = 100;

/**
 * Two processes of the built service on one PostgreSQL (a fresh database) and one Redis, as
 * several instances run in production: what one instance does, the other sees and respects.
 * Redis comes from TEST_REDIS_URL (CI sets it to the machine's Redis); without one, this suite
 * says so and skips.
 */
const redisUrl = process.env['TEST_REDIS_URL'];
if (!redisUrl) console.warn('instances.e2e: TEST_REDIS_URL is not set, so the two-instance suite is skipped.');
(redisUrl ? describe : describe.skip)('two instances of the built service on one PostgreSQL and one Redis', () => {
  let databaseUrl: string;
  let admin: Client;
  let one: ApiProcess;
  let two: ApiProcess;
  let customers: string[];
  const both = () => [one, two];

  beforeAll(async () => {
    ensureBuilt();
    const serverUrl = process.env[TEST_DATABASE_ENV.serverUrl];
    if (!serverUrl) throw new Error('no test database server (libs/testing global setup)');
    const name = `${TEST_DATABASE_PREFIX}instances_${process.env[TEST_DATABASE_ENV.runId]}`;
    admin = new Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
    databaseUrl = withDatabaseName(serverUrl, name);
    const env = {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl!,
      ADMIN_API_KEY: ADMIN_KEY,
      RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT_PER_MINUTE),
      // The sign-up budget lasts an hour in a Redis every run shares: runs from 127.0.0.1 would add up.
      SIGNUP_LIMIT_PER_HOUR: '1000000',
      MESSAGE_WORKER: 'true',
      LOG_LEVEL: 'warn',
      // The webhook receiver of the last test listens on 127.0.0.1 (unsafe outside tests).
      WEBHOOKS_ALLOW_PRIVATE: 'true',
    };
    // The first migrates the empty database; the second finds it migrated.
    one = await ApiProcess.start(env);
    two = await ApiProcess.start(env);
    customers = [];
    for (let i = 0; i < 3; i++) {
      const signUp = await both()[i % 2].request('POST', '/accounts', { body: { name: `Buyer ${i}` } });
      expect(signUp.status).toBe(201);
      customers.push(signUp.body.apiKey.key);
    }
  });

  afterAll(async () => {
    const codes = await Promise.all([one?.stop(), two?.stop()]);
    expect(codes).toEqual([0, 0]);
    if (admin) {
      await admin.query(`DROP DATABASE IF EXISTS ${new URL(databaseUrl).pathname.slice(1)} WITH (FORCE)`);
      await admin.end();
    }
  });

  it('shares one rate limit: a key gets RATE_LIMIT_PER_MINUTE requests in all, whichever instance', async () => {
    const signUp = await one.request('POST', '/accounts', { body: { name: 'Limited' } });
    const key: string = signUp.body.apiKey.key;
    const statuses: number[] = [];
    for (let i = 0; i < RATE_LIMIT_PER_MINUTE + 10; i++) {
      statuses.push((await both()[i % 2].request('GET', '/accounts/me', { key })).status);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(RATE_LIMIT_PER_MINUTE);
    expect(statuses.slice(RATE_LIMIT_PER_MINUTE)).toEqual(Array(10).fill(429));
  });

  it('replays an Idempotency-Key on the other instance: one message, the same answer', async () => {
    const idempotencyKey = randomUUID();
    const send = (api: ApiProcess) =>
      api.request('POST', '/messages', {
        key: customers[0],
        body: { message: 'once, whichever instance' },
        headers: { 'idempotency-key': idempotencyKey },
      });
    const first = await send(one);
    const replay = await send(two);
    expect(first.status).toBe(202);
    expect(replay.status).toBe(202);
    expect(replay.body).toEqual(first.body);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.headers.get('location')).toBe(first.headers.get('location'));
    const instance = new Client({ connectionString: databaseUrl });
    await instance.connect();
    try {
      const { rows: messages } = await instance.query(`SELECT count(*)::int AS n FROM messages WHERE body = $1`, [
        'once, whichever instance',
      ]);
      expect(messages).toEqual([{ n: 1 }]);
    } finally {
      await instance.end();
    }
  });

  it('oversells no unit: 200 concurrent one-unit orders split between them, on a stock of 50', async () => {
    const category = await one.request('POST', '/categories', {
      key: ADMIN_KEY,
      body: { name: `Kind ${randomUUID()}` },
    });
    const pet = await two.request('POST', '/pets', {
      key: ADMIN_KEY,
      body: { name: 'Rex', categoryId: category.body.id },
    });
    const petId: number = pet.body.id;
    expect(
      (await one.request('PUT', `/store/inventory/${petId}`, { key: ADMIN_KEY, body: { quantity: 50 } })).status,
    ).toBe(200);

    const responses: TestResponse[] = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        both()[i % 2].request('POST', '/store/orders', {
          key: customers[i % customers.length],
          body: { petId, quantity: 1 },
        }),
      ),
    );
    const created = responses.filter((r) => r.status === 201);
    expect(created).toHaveLength(50);
    expect(responses.filter((r) => r.status === 409)).toHaveLength(150);
    expect(new Set(created.map((r) => r.body.id)).size).toBe(50);
    const stock = await two.request('GET', `/store/inventory/${petId}`, { key: ADMIN_KEY });
    expect(stock.body.quantity).toBe(0);
  });

  it('delivers every message exactly once to the inbox, the workers of both instances sharing the queue', async () => {
    const posted = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        both()[i % 2].request('POST', '/messages', {
          key: customers[i % customers.length],
          body: { message: `m${i}` },
        }),
      ),
    );
    expect(posted.every((r) => r.status === 202)).toBe(true);
    const ids = posted.map((r) => r.body.id as string);
    const instance = new Client({ connectionString: databaseUrl });
    await instance.connect();
    try {
      const delivered = await eventually(
        async () =>
          (await instance.query(`SELECT id, status, attempts FROM messages WHERE id = ANY($1::uuid[])`, [ids]))
            .rows as Array<{ id: string; status: string; attempts: number }>,
        (rows) => rows.length === 60 && rows.every((row) => row.status === 'delivered'),
        30_000,
        200,
      );
      // Exactly once: one attempt each, and each job completed once.
      expect(delivered.every((row) => row.attempts === 1)).toBe(true);
      const { rows: jobs } = await instance.query(
        `SELECT count(*)::int AS n FROM pgboss.job ` +
          `WHERE name = 'message-delivery' AND id = ANY($1::uuid[]) AND state = 'completed'`,
        [ids],
      );
      expect(jobs).toEqual([{ n: 60 }]);
    } finally {
      await instance.end();
    }
    const inbox = await one.request('GET', '/messages?status=delivered&limit=100', { key: ADMIN_KEY });
    const listed = inbox.body.map((m: { id: string }) => m.id).filter((id: string) => ids.includes(id));
    expect(listed.sort()).toEqual([...ids].sort());
  });

  it('delivers each webhook event once to a healthy receiver, both instances working the same queue', async () => {
    const received: IncomingHttpHeaders[] = [];
    const receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received.push(req.headers);
        res.statusCode = 204;
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const signUp = await one.request('POST', '/accounts', { body: { name: 'Hooked' } });
      const key: string = signUp.body.apiKey.key;
      const body = { url, events: ['message.delivered'] };
      const hook = await two.request('POST', '/webhooks/endpoints', { key, body });
      expect(hook.status).toBe(201);
      const posted = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          both()[i % 2].request('POST', '/messages', { key, body: { message: `h${i}` } }),
        ),
      );
      expect(posted.every((r) => r.status === 202)).toBe(true);
      const instance = new Client({ connectionString: databaseUrl });
      await instance.connect();
      try {
        await eventually(
          async () =>
            (
              await instance.query(
                `SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'delivered'`,
                [hook.body.id],
              )
            ).rows[0].n as number,
          (n) => n === 40,
        );
        const { rows } = await instance.query(`SELECT attempts FROM webhook_deliveries WHERE endpoint_id = $1`, [
          hook.body.id,
        ]);
        expect(rows.every((row: { attempts: number }) => row.attempts === 1)).toBe(true);
      } finally {
        await instance.end();
      }
      expect(received).toHaveLength(40);
      expect(new Set(received.map((headers) => headers['webhook-id'])).size).toBe(40);
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });
});
