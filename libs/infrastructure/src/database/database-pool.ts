import { Logger } from '@nestjs/common';
import { Pool, PoolConfig } from 'pg';
import { DEFAULT_POOL_LIMITS, PoolLimits, poolSettings } from './data-source';

/**
 * The service's connection pool: node-postgres's own Pool, opened by the service with the settings every pooled
 * connection has (`poolSettings`: pipeline mode, the time bounds, keep-alive; TLS and the rest from the URL). One
 * per process: TransactionHost runs the repositories' statements and transactions on it, pg-boss its SQL, the
 * metrics read its counts. Also the injection token (apps/api's DatabaseModule provides it).
 */
export class DatabasePool extends Pool {
  private closing?: Promise<void>;

  constructor(url: string, limits: PoolLimits = DEFAULT_POOL_LIMITS, config: PoolConfig = {}) {
    super({ connectionString: url, ...poolSettings(limits), ...config });
    // An idle connection that fails (the server restarted, a partition) is reported here; without a listener it
    // would be an uncaught 'error' event. The pool drops it and opens another when one is needed.
    this.on('error', (error) => logger.warn(`An idle database connection failed: ${error.message}`));
  }

  /** Ends the pool (its connections close as they are released); every call after the first waits for the first. */
  close(): Promise<void> {
    return (this.closing ??= this.end());
  }
}

const logger = new Logger('Database');

/**
 * How long start-up waits for its first connection, at least: a request's bound (DB_ACQUIRE_TIMEOUT_MS, which an
 * operator may set to a second so that requests fail fast) is not a start-up's, and a server's first session in a
 * database builds its caches (a just-started or just-promoted server, a host under load took over a second).
 */
export const STARTUP_CONNECT_TIMEOUT_MS = 10_000;

/** A pool whose database answered: one connection opened and handed back, so that a wrong URL fails start-up. */
export async function openDatabasePool(url: string, limits: PoolLimits = DEFAULT_POOL_LIMITS): Promise<DatabasePool> {
  const pool = new DatabasePool(url, limits);
  try {
    // pg-pool reads its connection timeout when a connection starts opening (synchronously, in connect()): the first
    // one gets the start-up's, and every later one the request's again. It stays in the pool, warm for the first
    // request.
    const requestBound = pool.options.connectionTimeoutMillis;
    pool.options.connectionTimeoutMillis = Math.max(requestBound ?? 0, STARTUP_CONNECT_TIMEOUT_MS);
    const first = pool.connect();
    pool.options.connectionTimeoutMillis = requestBound;
    (await first).release();
  } catch (error) {
    await pool.close();
    throw error;
  }
  return pool;
}
