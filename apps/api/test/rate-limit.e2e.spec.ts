import { randomBytes, randomUUID } from 'node:crypto';
import { AddressInfo, connect, createServer, Server, Socket } from 'node:net';
import Redis from 'ioredis';
import type { ConfigOverrides } from '../src/config/app-config';
import { freePort } from './support/built-app';
import { capturedLog } from './support/log-capture';
import { ADMIN_KEY, TestApp, expectError } from './support/test-app';
import { eventually, WebhookReceiver } from './support/webhook-receiver';

describe('rate limit, in process (HTTP, real PostgreSQL)', () => {
  let api: TestApp;

  beforeAll(async () => {
    api = await TestApp.start({ auth: { rateLimitPerMinute: 3 } });
  });
  afterAll(() => api.close());

  it('counts per key, announces the policy, and answers 429 with Retry-After past the limit', async () => {
    const { key } = await api.customer('Limited'); // sign-up counts against this client's address, not the key
    const seen = [];
    for (let i = 0; i < 3; i++) seen.push(await api.get('/accounts/me', { key }));
    expect(seen.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(seen.map((r) => r.headers.get('ratelimit'))).toEqual([
      expect.stringMatching(/^"default";r=2;t=\d+$/),
      expect.stringMatching(/^"default";r=1;t=\d+$/),
      expect.stringMatching(/^"default";r=0;t=\d+$/),
    ]);
    expect(seen[0].headers.get('ratelimit-policy')).toBe('"default";q=3;w=60');

    const limited = await api.get('/accounts/me', { key });
    expectError(limited, 429, 'rate_limited');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);

    // Another key has its own budget.
    expect((await api.get('/accounts/me', { key: ADMIN_KEY })).status).toBe(200);
  });

  it('does not limit health probes', async () => {
    for (let i = 0; i < 5; i++) expect((await api.get('/health/live')).status).toBe(200);
  });

  /**
   * Another instance on the same database with its own (in-process) counters. Starting, the test app
   * fetched /openapi.json from 127.0.0.1: that request is already counted against the address.
   */
  const withLimits = async (overrides: ConfigOverrides, test: (app: TestApp) => Promise<void>) => {
    const app = await TestApp.startOn(api.databaseUrl, overrides);
    try {
      await test(app);
    } finally {
      await app.close();
    }
  };
  const SPENT_AT_START = 1;
  const madeUpKey = () => `psk_${randomBytes(32).toString('base64url')}`;

  it('gives made-up keys no fresh budget: 12 sign-ups with new random Bearer values, 5 a minute', async () => {
    await withLimits({ auth: { rateLimitPerMinute: 5 } }, async (app) => {
      const statuses = [];
      for (let i = 0; i < 12; i++) {
        const response = await app.post('/accounts', { key: madeUpKey(), body: { name: `Sybil ${i}` } });
        statuses.push(response.status);
        if (response.status === 429) expectError(response, 429, 'rate_limited');
      }
      expect(statuses).toEqual([...Array(5 - SPENT_AT_START).fill(201), ...Array(7 + SPENT_AT_START).fill(429)]);
    });
  });

  it('counts a missing, an unknown and a revoked key against the one client address', async () => {
    await withLimits({ auth: { rateLimitPerMinute: 4 + SPENT_AT_START } }, async (app) => {
      const { key } = await app.customer('Address'); // 1 against the address
      const spare = await app.post('/accounts/me/api-keys', { key }); // against the account
      expect((await app.delete(`/accounts/me/api-keys/${spare.body.id}`, { key })).status).toBe(204);
      expectError(await app.get('/accounts/me', { key: spare.body.key }), 401, 'unauthorized'); // 2
      expectError(await app.get('/accounts/me', { key: madeUpKey() }), 401, 'unauthorized'); // 3
      expectError(await app.get('/accounts/me'), 401, 'unauthorized'); // 4
      expectError(await app.get('/accounts/me', { key: madeUpKey() }), 429, 'rate_limited');
      expect((await app.get('/accounts/me', { key })).status).toBe(200); // the account's own budget
    });
  });

  it('counts per verified account: two keys of one account share one budget', async () => {
    await withLimits({ auth: { rateLimitPerMinute: 3 } }, async (app) => {
      const { key } = await app.customer('Two keys');
      const second = (await app.post('/accounts/me/api-keys', { key })).body.key; // 1
      expect((await app.get('/accounts/me', { key: second })).status).toBe(200); // 2
      expect((await app.get('/accounts/me', { key })).status).toBe(200); // 3
      expectError(await app.get('/accounts/me', { key: second }), 429, 'rate_limited');
    });
  });

  it('limits sign-ups per address an hour (SIGNUP_LIMIT_PER_HOUR), apart from the minute budget', async () => {
    await withLimits({ auth: { rateLimitPerMinute: 100, signupLimitPerHour: 2 } }, async (app) => {
      const { key } = await app.customer('First');
      expect((await app.post('/accounts', { body: { name: 'Second' } })).status).toBe(201);
      const third = await app.post('/accounts', { body: { name: 'Third' } });
      expectError(third, 429, 'rate_limited');
      expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(60);
      expect(third.headers.get('ratelimit-policy')).toBe('"default";q=100;w=60, "sign-up";q=2;w=3600');
      expect(third.headers.get('ratelimit')).toMatch(/^"sign-up";r=0;t=\d+$/);
      // As the OpenAPI description says they may look.
      const document = (await app.get('/openapi.json')).body;
      const declared = document.paths['/accounts'].post.responses['429'].headers;
      // Declared once in components.headers and referenced by each response.
      const pattern = (name: string) => {
        const ref: string = declared[name].$ref;
        return new RegExp(document.components.headers[ref.split('/').pop() as string].schema.pattern);
      };
      expect(third.headers.get('ratelimit-policy')).toMatch(pattern('RateLimit-Policy'));
      expect(third.headers.get('ratelimit')).toMatch(pattern('RateLimit'));
      expect((await app.get('/accounts/me', { key })).status).toBe(200);
    });
  });

  it('limits failed authentications per address, without refusing valid keys from it', async () => {
    await withLimits({ auth: { rateLimitPerMinute: 100, authFailureLimitPerMinute: 3 } }, async (app) => {
      const { key } = await app.customer('Neighbour');
      const statuses = [];
      const codes = [];
      for (let i = 0; i < 5; i++) {
        const response = await app.get('/accounts/me', { key: madeUpKey() });
        statuses.push(response.status);
        codes.push(response.body.code);
      }
      expect(statuses).toEqual([401, 401, 401, 429, 429]);
      // Its own code: waiting will not make those credentials work (the typed client does not retry it).
      expect(codes.slice(3)).toEqual(['too_many_auth_failures', 'too_many_auth_failures']);
      expect((await app.get('/accounts/me', { key })).status).toBe(200);
    });
  });

  describe('the client address behind a proxy (TRUST_PROXY)', () => {
    const from = (app: TestApp, address: string) =>
      app.get('/accounts/me', { headers: { 'x-forwarded-for': address } }).then((r) => r.status);

    it('ignores X-Forwarded-For by default: every request counts against the proxy', async () => {
      await withLimits({ auth: { rateLimitPerMinute: 2 + SPENT_AT_START } }, async (app) => {
        const statuses = [];
        for (const address of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) statuses.push(await from(app, address));
        expect(statuses).toEqual([401, 401, 429]);
      });
    });

    it.each([
      ['true', true],
      ['a hop count', 1],
      ['a list of addresses and CIDRs', ['192.0.2.7', '127.0.0.0/8']],
    ])('counts the forwarded client when the proxy is trusted (%s)', async (_, trustProxy) => {
      await withLimits({ auth: { rateLimitPerMinute: 2 }, http: { trustProxy } }, async (app) => {
        const statuses = [];
        for (let i = 0; i < 3; i++) statuses.push(await from(app, '203.0.113.1'));
        expect(statuses).toEqual([401, 401, 429]);
        expect(await from(app, '203.0.113.2')).toBe(401);
      });
    });
  });

  it('is off at 0: no headers, no limit', async () => {
    const unlimited = await TestApp.startOn(api.databaseUrl, { auth: { rateLimitPerMinute: 0 } });
    try {
      for (let i = 0; i < 5; i++) {
        const response = await unlimited.get('/accounts/me', { key: ADMIN_KEY });
        expect(response.status).toBe(200);
        expect(response.headers.get('ratelimit')).toBeNull();
      }
    } finally {
      await unlimited.close();
    }
  });
});

/**
 * Shared counters need a Redis: TEST_REDIS_URL (CI sets it to the machine's Redis). Without
 * one this suite says so and skips rather than pretending.
 */
const redisUrl = process.env['TEST_REDIS_URL'];
(redisUrl ? describe : describe.skip)(
  'rate limit shared through Redis by two instances (HTTP, real PostgreSQL)',
  () => {
    let first: TestApp;
    let second: TestApp;
    const prefix = `petstore:test:${randomUUID()}:`;

    // Through REDIS_KEY_PREFIX, as a deployment sets it.
    const settings: ConfigOverrides = { auth: { rateLimitPerMinute: 4, redisUrl: redisUrl!, redisKeyPrefix: prefix } };

    beforeAll(async () => {
      first = await TestApp.start(settings);
      second = await TestApp.startOn(first.databaseUrl, settings);
      // Redis answers both (readiness is never rate-limited): the requests below are counted, not failed open.
      for (const api of [first, second]) {
        await eventually(
          () => api.get<{ redis?: string }>('/health/ready').then((r) => r.body.redis),
          (redis) => redis === 'up',
        );
      }
    });
    afterAll(async () => {
      await first.close();
      await second.close();
      const redis = new Redis(redisUrl!);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    });

    it('counts made-up keys sent to either instance against the one client address', async () => {
      // The address may send 4 a minute. Alone, an instance would see at most three of these and its own fetch of
      // /openapi.json at start, 4: the fifth is refused only if the two count together. Those start-up fetches count
      // in Redis or not (an instance's Redis client may still be connecting then, and the process counts alone: CI saw
      // it), so the first 429 comes at the third request at the earliest, and at the fifth at the latest.
      const statuses = [];
      for (const api of [first, second, first, second, first]) {
        statuses.push((await api.get('/accounts/me', { key: `psk_${randomBytes(32).toString('base64url')}` })).status);
      }
      expect(statuses.slice(0, 2)).toEqual([401, 401]);
      const refusedFrom = statuses.indexOf(429);
      expect(refusedFrom).toBeGreaterThanOrEqual(2);
      expect(statuses.slice(refusedFrom)).toEqual(Array(statuses.length - refusedFrom).fill(429));
    });

    it('counts requests to either instance against one budget', async () => {
      const statuses = [];
      for (const api of [first, second, first, second, first])
        statuses.push((await api.get('/accounts/me', { key: ADMIN_KEY })).status);
      expect(statuses).toEqual([200, 200, 200, 200, 429]);
    });

    it('keeps its counters under REDIS_KEY_PREFIX: another prefix on the same Redis counts apart', async () => {
      const redis = new Redis(redisUrl!);
      try {
        expect((await redis.keys(`${prefix}ratelimit:*`)).length).toBeGreaterThan(0);
      } finally {
        redis.disconnect();
      }
      const otherPrefix = `petstore:test:${randomUUID()}:`;
      const other = await TestApp.startOn(first.databaseUrl, {
        auth: { ...settings.auth, redisKeyPrefix: otherPrefix },
      });
      try {
        expect((await first.get('/accounts/me', { key: ADMIN_KEY })).status).toBe(429);
        expect((await other.get('/accounts/me', { key: ADMIN_KEY })).status).toBe(200);
      } finally {
        await other.close();
        const cleanup = new Redis(redisUrl!);
        const keys = await cleanup.keys(`${otherPrefix}*`);
        if (keys.length) await cleanup.del(...keys);
        cleanup.disconnect();
      }
    });
  },
);

/**
 * Webhook pings (POST /webhooks/endpoints/{id}/test) have a budget of their own, 5 a minute per account, counted
 * in the same store as every other budget: through Redis, shared by instances, when one is configured.
 */
describe('webhook pings: 5 a minute per account, shared by instances through the rate-limit store', () => {
  let first: TestApp;
  let second: TestApp;
  const prefix = `petstore:test:${randomUUID()}:`;
  const overrides: ConfigOverrides = {
    auth: { rateLimitPerMinute: 100, ...(redisUrl ? { redisUrl } : {}) },
    webhooks: { allowPrivate: true },
  };

  beforeAll(async () => {
    first = await TestApp.start(overrides, { rateLimitPrefix: prefix });
    // Without TEST_REDIS_URL each process counts alone: the second instance is then the first one again.
    second = redisUrl ? await TestApp.startOn(first.databaseUrl, overrides, { rateLimitPrefix: prefix }) : first;
  });
  afterAll(async () => {
    await first.close();
    if (second !== first) await second.close();
    if (redisUrl) {
      const redis = new Redis(redisUrl);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    }
  });

  it('answers 429 rate_limited to the sixth ping of a minute, whichever instance gets it', async () => {
    const { key } = await first.customer('Eager pinger');
    const body = { url: 'https://127.0.0.1:8443/hook', events: ['order.placed'] };
    const hook = (await first.post('/webhooks/endpoints', { key, body })).body.id as number;
    const statuses: number[] = [];
    for (const api of [first, second, first, second, first, second]) {
      const ping = await api.post(`/webhooks/endpoints/${hook}/test`, { key });
      statuses.push(ping.status);
      if (ping.status === 429) {
        expectError(ping, 429, 'rate_limited');
        expect(Number(ping.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(ping.headers.get('ratelimit-policy')).toBe('"default";q=100;w=60, "webhook-outbound";q=5;w=60');
      }
    }
    expect(statuses).toEqual([202, 202, 202, 202, 202, 429]);
    // The account's other requests are not held by it, nor are another account's pings.
    expect((await second.get(`/webhooks/endpoints/${hook}`, { key })).status).toBe(200);
    const other = await first.customer('Other pinger');
    const otherHook = (await first.post('/webhooks/endpoints', { key: other.key, body })).body.id as number;
    expect((await second.post(`/webhooks/endpoints/${otherHook}/test`, { key: other.key })).status).toBe(202);
  });

  it("a read key's refused writes spend its own budget, not the account's pings nor its minute", async () => {
    const { key } = await first.customer('Leaked read key');
    const body = { url: 'https://127.0.0.1:8443/hook', events: ['order.placed'] };
    const hook = (await first.post('/webhooks/endpoints', { key, body })).body.id as number;
    const reader = (await first.post('/accounts/me/api-keys', { key, body: { scopes: ['read'] } })).body.key as string;
    const refused: number[] = [];
    for (let i = 0; i < 8; i++)
      refused.push((await first.post(`/webhooks/endpoints/${hook}/test`, { key: reader })).status);
    expect(refused).toEqual(Array(8).fill(403));
    // The account's own key still has its five pings a minute, and its requests their budget.
    const pings: number[] = [];
    for (let i = 0; i < 5; i++) pings.push((await second.post(`/webhooks/endpoints/${hook}/test`, { key })).status);
    expect(pings).toEqual([202, 202, 202, 202, 202]);
    expect((await first.get('/accounts/me', { key })).headers.get('ratelimit')).toMatch(/"default";r=9\d\b/);
  });
});

/**
 * A redelivery makes the same outbound POST as a ping, at once, to a URL the customer chose: it counts against the
 * same budget (issue 36, finding 2: five deliveries retried in parallel gave 153 outbound POSTs in 15 s).
 */
describe('webhook redeliveries share the pings budget (worker on, a local receiver)', () => {
  let api: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    api = await TestApp.start({
      auth: { rateLimitPerMinute: 100 },
      messaging: { worker: true },
      webhooks: { allowPrivate: true },
    });
  });
  afterAll(async () => {
    await api?.close();
    await receiver?.close();
  });

  it('refuses the sixth ping or redelivery of a minute with 429, and sends nothing for it', async () => {
    const { key } = await api.customer('Replaying');
    const body = { url: `${receiver.url}/outbound`, events: ['order.placed'] };
    const hook = (await api.post('/webhooks/endpoints', { key, body })).body.id as number;
    const deliveries = () => api.get(`/webhooks/endpoints/${hook}/deliveries`, { key });
    expect((await api.post(`/webhooks/endpoints/${hook}/test`, { key })).status).toBe(202); // 1 of 5
    const [ping] = await eventually(
      async () => (await deliveries()).body,
      (list) => list[0]?.status === 'delivered',
    );
    const retry = () => api.post(`/webhooks/endpoints/${hook}/deliveries/${ping.id}/retry`, { key });
    for (let i = 2; i <= 5; i++) {
      const accepted = await retry();
      expect({ i, status: accepted.status }).toEqual({ i, status: 202 });
      expect(accepted.headers.get('ratelimit-policy')).toBe('"default";q=100;w=60, "webhook-outbound";q=5;w=60');
      await eventually(
        async () => (await deliveries()).body,
        (list) => list[0]?.status === 'delivered' && list[0]?.attempts === i,
      );
    }
    const refused = await retry();
    expectError(refused, 429, 'rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('ratelimit')).toMatch(/^"webhook-outbound";r=0;t=\d+$/);
    expectError(await api.post(`/webhooks/endpoints/${hook}/test`, { key }), 429, 'rate_limited');
    expect(receiver.to('/outbound')).toHaveLength(5);
    expect((await deliveries()).body[0]).toMatchObject({ id: ping.id, status: 'delivered', attempts: 5 });
  });
});

/**
 * Issue 48, item 7: with Redis unreachable the limits count per process, as without REDIS_URL, instead of letting
 * every request through; the log says so once at start-up, once when Redis is lost and once when it is back, never
 * once per request.
 */
describe('rate limit with Redis unreachable: per-process counting (HTTP, real PostgreSQL)', () => {
  const madeUpKey = () => `psk_${randomBytes(32).toString('base64url')}`;
  const rateLimitLines = (lines: Array<Record<string, unknown>>) =>
    lines.filter((line) => line['context'] === 'RateLimit').map((line) => [line['level'], line['msg']]);
  const limits = { rateLimitPerMinute: 100, authFailureLimitPerMinute: 3, signupLimitPerHour: 2 };
  let databaseUrl: string;

  beforeAll(async () => {
    const base = await TestApp.start();
    databaseUrl = base.databaseUrl;
    await base.close();
  });

  it('REDIS_URL on a closed port: 429 after the failed-authentication and sign-up budgets; one warning', async () => {
    const closedPort = await freePort(); // free, and nothing listens on it
    const { lines, logger } = capturedLog();
    const app = await TestApp.startOn(
      databaseUrl,
      { auth: { ...limits, redisUrl: `redis://127.0.0.1:${closedPort}` } },
      { logger },
    );
    try {
      await eventually(
        () => rateLimitLines(lines),
        (found) => found.length > 0,
      );
      const unknownKeys = [];
      for (let i = 0; i < 5; i++) unknownKeys.push((await app.get('/accounts/me', { key: madeUpKey() })).body.code);
      expect(unknownKeys).toEqual([
        'unauthorized',
        'unauthorized',
        'unauthorized',
        'too_many_auth_failures',
        'too_many_auth_failures',
      ]);
      const signUps = [];
      for (let i = 0; i < 3; i++) signUps.push((await app.post('/accounts', { body: { name: `Down ${i}` } })).status);
      expect(signUps).toEqual([201, 201, 429]);
      expect(rateLimitLines(lines)).toEqual([
        ['warn', 'Redis (REDIS_URL) does not answer at start-up: rate limits count per process until it does.'],
      ]);
    } finally {
      await app.close();
    }
  });

  (redisUrl ? it : it.skip)('Redis lost, then back (a proxy closed and reopened): one line each', async () => {
    const target = new URL(redisUrl!);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 6379));
    const port = await proxy.open();
    const prefix = `petstore:test:${randomUUID()}:`;
    const { lines, logger } = capturedLog();
    const app = await TestApp.startOn(
      databaseUrl,
      { auth: { ...limits, redisUrl: `redis://127.0.0.1:${port}`, redisKeyPrefix: prefix } },
      { logger },
    );
    try {
      await eventually(
        () => app.get<{ redis?: string }>('/health/ready').then((r) => r.body.redis),
        (redis) => redis === 'up',
      );
      // Up: counted in Redis, under the prefix.
      expect((await app.get('/accounts/me', { key: madeUpKey() })).status).toBe(401);
      const shared = new Redis(redisUrl!);
      try {
        expect(await shared.get(`${prefix}ratelimit:auth-failures:127.0.0.1`)).toBe('1');
      } finally {
        shared.disconnect();
      }

      await proxy.close();
      await eventually(
        () => rateLimitLines(lines),
        (found) => found.length > 0,
      );
      // Lost: this process counts alone from 0, and still refuses past the budget.
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await app.get('/accounts/me', { key: madeUpKey() })).status);
      expect(statuses).toEqual([401, 401, 401, 429, 429]);

      await proxy.open(port);
      await eventually(
        () => rateLimitLines(lines),
        (found) => found.length > 1,
      );
      expect(rateLimitLines(lines)).toEqual([
        ['warn', 'Redis (REDIS_URL) lost: rate limits count per process until it answers again.'],
        ['info', 'Redis (REDIS_URL) answers again: rate limits are shared again.'],
      ]);
      // Back: the shared count goes on from where Redis had it (1): two more failures, then the third is refused.
      const after = [];
      for (let i = 0; i < 3; i++) after.push((await app.get('/accounts/me', { key: madeUpKey() })).status);
      expect(after).toEqual([401, 401, 429]);
    } finally {
      await app.close();
      await proxy.close();
      const cleanup = new Redis(redisUrl!);
      const keys = await cleanup.keys(`${prefix}*`);
      if (keys.length) await cleanup.del(...keys);
      cleanup.disconnect();
    }
  });
});

/** A TCP proxy to one address that can be closed (its connections cut) and opened again on the same port. */
class TcpProxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  open(port = 0): Promise<number> {
    const server = createServer((client) => {
      const upstream = connect(this.port, this.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    this.server = server;
    return new Promise((resolve) =>
      server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
    );
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise((resolve) => server.close(resolve));
  }
}
