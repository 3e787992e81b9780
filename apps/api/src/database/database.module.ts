import {
  DynamicModule,
  Global,
  Inject,
  Injectable,
  Logger,
  Module,
  OnApplicationShutdown,
  Optional,
} from '@nestjs/common';
import { Clock, UnitOfWork } from '@petstore/application';
import {
  DEFAULT_POOL_LIMITS,
  DatabasePool,
  PgUnitOfWork,
  PoolLimits,
  ReadReplicas,
  SystemClock,
  TransactionHost,
  TransactionPreamble,
  openDatabasePool,
  poolBoundsHold,
  transactionBoundsSql,
} from '@petstore/infrastructure';
import { AppConfig } from '../config/app-config';
import { openReadReplicas } from './replica-reads';

/**
 * Closes the pool when the application closes, after every BeforeApplicationShutdown hook (the job queue stops its
 * workers first) and the HTTP drain. `DatabasePool.close` ends it once, however often it is called.
 */
@Injectable()
class DatabasePoolCloser implements OnApplicationShutdown {
  constructor(
    @Inject(DatabasePool) private readonly pool: DatabasePool,
    @Optional() private readonly replicas?: ReadReplicas,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.replicas?.close();
    await this.pool.close();
  }
}

/**
 * The connection pool, the transaction host and the ports every slice shares; with DATABASE_REPLICA_URLS, the read
 * replicas (ReadReplicas: their pools and polling; TransactionHost reads from them inside a ReadScope).
 */
@Global()
@Module({})
export class DatabaseModule {
  /** `readReplicas`: whether this process may read from DATABASE_REPLICA_URLS (one that serves HTTP). */
  static forRoot(databaseUrl: string, config: AppConfig, { readReplicas = false } = {}): DynamicModule {
    const replicas = readReplicas && config.database.replicaUrls.length > 0;
    return {
      module: DatabaseModule,
      providers: [
        { provide: DatabasePool, useFactory: () => openPool(databaseUrl, poolLimits(config)) },
        // Behind a pooler every transaction starts by setting its bounds (PoolLimits.viaPooler).
        ...(poolLimits(config).viaPooler
          ? [
              {
                provide: TransactionPreamble,
                useValue: new TransactionPreamble(transactionBoundsSql(poolLimits(config))),
              },
            ]
          : []),
        // Only when configured: unset, TransactionHost has no ReadReplicas and nothing polls nor counts.
        ...(replicas
          ? [
              {
                provide: ReadReplicas,
                inject: [DatabasePool],
                useFactory: (pool: DatabasePool) => openReadReplicas(pool, databaseUrl, config),
              },
            ]
          : []),
        DatabasePoolCloser,
        TransactionHost,
        { provide: UnitOfWork, useClass: PgUnitOfWork },
        { provide: Clock, useClass: SystemClock },
      ],
      exports: [DatabasePool, TransactionHost, UnitOfWork, Clock, ...(replicas ? [ReadReplicas] : [])],
    };
  }
}

/** The configured time bounds of the pool's connections (docs/operations.md, Security and limits). */
export function poolLimits({ database }: AppConfig): PoolLimits {
  return {
    ...DEFAULT_POOL_LIMITS,
    acquireTimeoutMs: database.acquireTimeoutMs,
    statementTimeoutMs: database.statementTimeoutMs,
    idleInTransactionTimeoutMs: database.idleInTransactionTimeoutMs,
    queryTimeoutMs: database.queryTimeoutMs,
    // DATABASE_DIRECT_URL beside a different DATABASE_URL: the pool goes through a transaction pooler.
    viaPooler: !!database.url && !!database.directUrl && database.directUrl !== database.url,
  };
}

/**
 * The pool, once its sessions are known to carry the server-side bounds. Direct, a pooler that drops the
 * start-up parameters (PgBouncer's `ignore_startup_parameters`) would leave every statement unbounded: refused.
 * Through a pooler, sessions it opened before start-up set the role's defaults keep their old values until it
 * renews them; each transaction sets its own, so that is said, not refused.
 */
async function openPool(url: string, limits: PoolLimits): Promise<DatabasePool> {
  const pool = await openDatabasePool(url, limits);
  const session = { query: async (sql: string) => (await pool.query(sql)).rows };
  const wrong = await poolBoundsHold(session, limits).catch(() => null);
  if (wrong && !limits.viaPooler) {
    await pool.close();
    throw new Error(
      `DATABASE_URL's sessions lack the server-side bounds (${wrong}): a connection pooler ignoring start-up ` +
        'parameters? Set DATABASE_DIRECT_URL to a direct connection; see docs/operations.md.',
    );
  }
  if (wrong) {
    new Logger('Database').warn(
      `A pooled session has other bounds (${wrong}): it predates the role's defaults; transactions set their own.`,
    );
  }
  return pool;
}
