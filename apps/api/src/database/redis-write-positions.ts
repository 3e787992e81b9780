import type { SharedWritePositions } from '@petstore/infrastructure';
import type Redis from 'ioredis';
import { requestPathRedis } from '../common/http-kit/request-path-redis';

/**
 * Each account's last write position (the primary's WAL position after its commit), shared by the instances through
 * Redis (REDIS_URL), so that read-your-writes holds whichever instance the next read reaches. One key per account,
 * `<REDIS_KEY_PREFIX>lsn:<account>`, holding the position as 16 hex digits (so that Lua compares them as strings,
 * exactly: Lua's numbers are doubles), raised and never lowered, and forgotten after `ttlMs`: by then every replica in
 * use has replayed it (none serves more than DATABASE_REPLICA_MAX_LAG_MS behind).
 */
export class RedisWritePositions implements SharedWritePositions {
  private static readonly RAISE = `
    local current = redis.call('GET', KEYS[1])
    if not current or current < ARGV[1] then
      redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
    else
      redis.call('PEXPIRE', KEYS[1], ARGV[2])
    end
    return 0`;
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly prefix: string,
    private readonly ttlMs: number,
  ) {
    // A read waits at most a second before its request goes on (on the primary: ReadReplicas).
    this.redis = requestPathRedis(url);
  }

  async get(account: number): Promise<bigint | undefined> {
    const value = await this.redis.get(this.key(account));
    return value === null ? undefined : BigInt(`0x${value}`);
  }

  async raise(account: number, lsn: bigint): Promise<void> {
    await this.redis.eval(
      RedisWritePositions.RAISE,
      1,
      this.key(account),
      lsn.toString(16).padStart(16, '0'),
      this.ttlMs,
    );
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }

  private key(account: number): string {
    return `${this.prefix}lsn:${account}`;
  }
}
