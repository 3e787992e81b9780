import { DynamicModule, Global, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { Clock, UnitOfWork } from '@petstore/application';
import { SystemClock, TransactionHost, TypeOrmUnitOfWork, createDataSource } from '@petstore/infrastructure';
import { DataSource } from 'typeorm';

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
  static forRoot(databaseUrl: string): DynamicModule {
    return {
      module: DatabaseModule,
      providers: [
        { provide: DataSource, useFactory: () => createDataSource(databaseUrl).initialize() },
        DataSourceCloser,
        TransactionHost,
        { provide: UnitOfWork, useClass: TypeOrmUnitOfWork },
        { provide: Clock, useClass: SystemClock },
      ],
      exports: [DataSource, TransactionHost, UnitOfWork, Clock],
    };
  }
}
