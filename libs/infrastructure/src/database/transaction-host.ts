import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '@petstore/application';
import { DataSource, EntityManager } from 'typeorm';
import { translateDriverError } from './driver-errors';

/**
 * Holds the transaction of the command being run, so that every repository called
 * inside `UnitOfWork.run` uses the same connection without passing it around.
 */
@Injectable()
export class TransactionHost {
  private readonly current = new AsyncLocalStorage<EntityManager>();

  constructor(private readonly dataSource: DataSource) {}

  /** The transaction's manager inside `UnitOfWork.run`, else the pool's. */
  get manager(): EntityManager {
    return this.current.getStore() ?? this.dataSource.manager;
  }

  get inTransaction(): boolean {
    return this.current.getStore() !== undefined;
  }

  transaction<T>(work: () => Promise<T>): Promise<T> {
    if (this.inTransaction) return work();
    // A transaction whose connection broke between statements fails in TypeORM itself, outside
    // the query runner's translation (driver-errors.ts): translated here.
    return this.dataSource
      .transaction((manager) => this.current.run(manager, work))
      .catch((error: unknown) => {
        throw translateDriverError(error);
      });
  }
}

@Injectable()
export class TypeOrmUnitOfWork extends UnitOfWork {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    return this.host.transaction(work);
  }
}
