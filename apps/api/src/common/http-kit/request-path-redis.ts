import Redis from 'ioredis';

/**
 * A Redis connection that requests wait on (REDIS_URL): the shared rate limit, the replicas' write positions, the
 * catalogue cache's recent writers. A command fails at once while the connection is down (never queued until it is
 * back), and waits at most a second on a connection that stopped answering; each caller then goes its documented way
 * (the process's own counters, the primary, the database). Errors surface on the commands that fail: the client's
 * own `error` events are swallowed here so that they cannot crash the process; a caller that tracks the state adds
 * its listeners.
 */
export function requestPathRedis(url: string): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    connectTimeout: 2000,
    commandTimeout: 1000,
  });
  redis.on('error', () => undefined);
  return redis;
}
