import { Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { requestPathRedis } from '../http-kit/request-path-redis';

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

/**
 * Counters shared by every instance through Redis (REDIS_URL), and this process's own while Redis does not answer:
 * the limits then count per process (operations.md, "Degraded modes"), as they do without REDIS_URL, rather than not
 * at all. Unreachable at start-up is one warning; losing Redis is one line and getting it back another, never one
 * per request: a request while it is down goes to the process's counters at once (no offline queue, no retry), and
 * a command that fails on a connection that looks up marks it down until the next one succeeds.
 *
 * Hand-written: `rate-limiter-flexible` (its `insuranceLimiter`) does this, but is not installed, and its counters
 * and Redis keys differ from the ones every release so far has used (a rolling upgrade would count twice).
 */
export class RedisRateLimitStore implements RateLimitStore {
  private static readonly SCRIPT = `
    local count = redis.call('INCR', KEYS[1])
    if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
    local ttl = redis.call('PTTL', KEYS[1])
    if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
    return {count, ttl}`;
  private readonly redis: Redis;
  /** The counters while Redis does not answer. */
  private readonly local = new InMemoryRateLimitStore();
  /** `starting` until the first connection or the first failure; then whether Redis answers. */
  private state: 'starting' | 'up' | 'down' = 'starting';
  private retrying = false;
  private closed = false;
  private readonly logger = new Logger('RateLimit');

  constructor(
    url: string,
    /** `petstore:ratelimit:` by default (REDIS_KEY_PREFIX `petstore:`): the keys every release so far has used. */
    private readonly prefix: string,
  ) {
    // A command while the connection is down fails at once (the process's counters take it); a Redis that stops
    // answering on an open connection: the request counts here after a second, and waits no more.
    this.redis = requestPathRedis(url);
    // Errors surface on the commands that fail, and as the state's changes.
    this.redis.on('error', () => this.markDown());
    this.redis.on('close', () => this.markDown());
    this.redis.on('ready', () => this.markUp());
  }

  async hit(client: string, windowMs: number): Promise<WindowCount> {
    // Down on a connection that looks open (its commands failed or timed out): one request at a time tries Redis
    // again, the others count here without waiting for it.
    if (this.redis.status !== 'ready' || (this.state === 'down' && this.retrying)) {
      return this.local.hit(client, windowMs);
    }
    const retry = this.state === 'down';
    if (retry) this.retrying = true;
    try {
      const [count, ttl] = (await this.redis.eval(RedisRateLimitStore.SCRIPT, 1, this.prefix + client, windowMs)) as [
        number,
        number,
      ];
      this.markUp();
      return { count, resetInMs: ttl };
    } catch {
      this.markDown();
      return this.local.hit(client, windowMs);
    } finally {
      if (retry) this.retrying = false;
    }
  }

  async close(): Promise<void> {
    this.closed = true; // closing is not losing it: no line
    this.redis.disconnect();
    await this.local.close();
  }

  private markDown(): void {
    if (this.state === 'down' || this.closed) return;
    if (this.state === 'starting') {
      this.logger.warn('Redis (REDIS_URL) does not answer at start-up: rate limits count per process until it does.');
    } else {
      this.logger.warn('Redis (REDIS_URL) lost: rate limits count per process until it answers again.');
    }
    this.state = 'down';
  }

  private markUp(): void {
    if (this.state === 'up' || this.closed) return;
    if (this.state === 'down') this.logger.log('Redis (REDIS_URL) answers again: rate limits are shared again.');
    this.state = 'up';
  }
}
