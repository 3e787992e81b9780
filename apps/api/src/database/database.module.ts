import { DynamicModule, Global, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { Clock, UnitOfWork } from '@petstore/application';
import {
  DEFAULT_POOL_LIMITS,
  PoolLimits,
  SystemClock,
  TransactionHost,
  TypeOrmUnitOfWork,
  createDataSource,
} from '@petstore/infrastructure';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';

@Injectable()
class DataSourceCloser implements OnApplicationShutdown {
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}

/** The connection pool, the transaction host and the ports every slice shares. */
@Global()
@Module({})
export class DatabaseModule {
  static forRoot(databaseUrl: string, config: AppConfig): DynamicModule {
    return {
      module: DatabaseModule,
      providers: [
        { provide: DataSource, useFactory: () => createDataSource(databaseUrl, {}, poolLimits(config)).initialize() },
        DataSourceCloser,
        TransactionHost,
        { provide: UnitOfWork, useClass: TypeOrmUnitOfWork },
        { provide: Clock, useClass: SystemClock },
      ],
      exports: [DataSource, TransactionHost, UnitOfWork, Clock],
    };
  }
}

/** The configured time bounds of the pool's connections (README, Security and limits). */
export function poolLimits({ database }: AppConfig): PoolLimits {
  return {
    ...DEFAULT_POOL_LIMITS,
    acquireTimeoutMs: database.acquireTimeoutMs,
    statementTimeoutMs: database.statementTimeoutMs,
    idleInTransactionTimeoutMs: database.idleInTransactionTimeoutMs,
    queryTimeoutMs: database.queryTimeoutMs,
  };
}
