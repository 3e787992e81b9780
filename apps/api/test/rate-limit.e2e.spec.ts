import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { ADMIN_KEY, TestApp, expectError } from './support/test-app';

describe('rate limit, in process (HTTP, real PostgreSQL)', () => {
  let api: TestApp;

  beforeAll(async () => {
    api = await TestApp.start({ rateLimitPerMinute: 3 });
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

  it('is off at 0: no headers, no limit', async () => {
    const unlimited = await TestApp.startOn(api.databaseUrl, { rateLimitPerMinute: 0 });
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
(redisUrl ? describe : describe.skip)('rate limit shared through Redis by two instances (HTTP, real PostgreSQL)', () => {
  let first: TestApp;
  let second: TestApp;
  const prefix = `petstore:test:${randomUUID()}:`;

  beforeAll(async () => {
    first = await TestApp.start({ rateLimitPerMinute: 4, redisUrl: redisUrl! }, { rateLimitPrefix: prefix });
    second = await TestApp.startOn(first.databaseUrl, { rateLimitPerMinute: 4, redisUrl: redisUrl! }, { rateLimitPrefix: prefix });
  });
  afterAll(async () => {
    await first.close();
    await second.close();
    const redis = new Redis(redisUrl!);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  it('counts requests to either instance against one budget', async () => {
    const statuses = [];
    for (const api of [first, second, first, second, first]) statuses.push((await api.get('/accounts/me', { key: ADMIN_KEY })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
  });
});
