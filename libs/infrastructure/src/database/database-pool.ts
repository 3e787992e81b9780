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

/** A pool whose database answered: one connection opened and handed back, so that a wrong URL fails start-up. */
export async function openDatabasePool(url: string, limits: PoolLimits = DEFAULT_POOL_LIMITS): Promise<DatabasePool> {
  const pool = new DatabasePool(url, limits);
  try {
    (await pool.connect()).release();
  } catch (error) {
    await pool.close();
    throw error;
  }
  return pool;
}
