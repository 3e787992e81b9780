import type Redis from 'ioredis';
import { requestPathRedis } from '../common/http-kit/request-path-redis';

/**
 * The accounts that wrote lately, shared by the instances through Redis (REDIS_URL): one key per account,
 * `<REDIS_KEY_PREFIX>wrote:<account>`, set after each write answered 2xx and gone after `ttlMs` (the catalogue cache's
 * maximum age), so that a read by the account on any instance bypasses the cache until every answer that may predate
 * the write is too old to be served (CatalogueCache, RecentWriters).
 */
export class RedisRecentWriters {
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly prefix: string,
    private readonly ttlMs: number,
  ) {
    // A read waits at most a second before it goes on (to the database: a store that does not answer is a bypass).
    this.redis = requestPathRedis(url);
  }

  async mark(account: number): Promise<void> {
    await this.redis.set(this.key(account), '1', 'PX', this.ttlMs);
  }

  async wrote(account: number): Promise<boolean> {
    return (await this.redis.exists(this.key(account))) === 1;
  }

  close(): void {
    this.redis.disconnect();
  }

  private key(account: number): string {
    return `${this.prefix}wrote:${account}`;
  }
}
