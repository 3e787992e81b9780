import Redis from 'ioredis';

export interface WindowCount {
  /** Requests counted in the current window, this one included. */
  count: number;
  /** Milliseconds until the window resets. */
  resetInMs: number;
}

/** Counts requests per client in fixed windows. */
export interface RateLimitStore {
  hit(client: string, windowMs: number): Promise<WindowCount>;
  /**
   * Takes back one request counted in the client's current window (a `304 Not Modified` costs nothing). A window
   * that has ended, or a count at 0, is left alone: a refund never creates a window or goes below 0.
   */
  refund(client: string): Promise<void>;
  close(): Promise<void>;
}

/** One process's own counters (REDIS_URL unset). */
export class InMemoryRateLimitStore implements RateLimitStore {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  async hit(client: string, windowMs: number): Promise<WindowCount> {
    const now = Date.now();
    let window = this.windows.get(client);
    if (!window || window.resetAt <= now) {
      if (this.windows.size > 10_000) this.prune(now);
      window = { count: 0, resetAt: now + windowMs };
      this.windows.set(client, window);
    }
    window.count++;
    return { count: window.count, resetInMs: window.resetAt - now };
  }

  async refund(client: string): Promise<void> {
    const window = this.windows.get(client);
    if (window && window.resetAt > Date.now() && window.count > 0) window.count--;
  }

  async close(): Promise<void> {
    this.windows.clear();
  }

  private prune(now: number): void {
    for (const [client, window] of this.windows) if (window.resetAt <= now) this.windows.delete(client);
  }
}

/** Counters shared by every instance through Redis (REDIS_URL). */
export class RedisRateLimitStore implements RateLimitStore {
  private static readonly SCRIPT = `
    local count = redis.call('INCR', KEYS[1])
    if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
    local ttl = redis.call('PTTL', KEYS[1])
    if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
    return {count, ttl}`;
  // DECR keeps the key's expiry; a key that expired is not created again (DECR would make it -1, forever).
  private static readonly REFUND = `
    local count = tonumber(redis.call('GET', KEYS[1]) or '0')
    if count > 0 then redis.call('DECR', KEYS[1]) end
    return 0`;
  private readonly redis: Redis;

  constructor(
    url: string,
    /** `petstore:ratelimit:` by default (REDIS_KEY_PREFIX `petstore:`): the keys every release so far has used. */
    private readonly prefix: string,
  ) {
    this.redis = new Redis(url, {
      lazyConnect: false,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      connectTimeout: 2000,
    });
    // Errors surface on the commands that fail; keep the client from crashing the process.
    this.redis.on('error', () => undefined);
  }

  async hit(client: string, windowMs: number): Promise<WindowCount> {
    const [count, ttl] = (await this.redis.eval(RedisRateLimitStore.SCRIPT, 1, this.prefix + client, windowMs)) as [
      number,
      number,
    ];
    return { count, resetInMs: ttl };
  }

  async refund(client: string): Promise<void> {
    await this.redis.eval(RedisRateLimitStore.REFUND, 1, this.prefix + client);
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
