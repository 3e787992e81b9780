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
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly prefix = 'petstore:ratelimit:',
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

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
