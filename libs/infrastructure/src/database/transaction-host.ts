import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '@petstore/application';
import { DataSource, EntityManager, QueryFailedError } from 'typeorm';

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
    return this.dataSource.transaction((manager) => this.current.run(manager, work));
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

/** The PostgreSQL error behind a failed query (SQLSTATE and constraint), if any. */
export function pgError(error: unknown): { code?: string; constraint?: string } | null {
  if (!(error instanceof QueryFailedError)) return null;
  const driverError = error.driverError as { code?: string; constraint?: string };
  return { code: driverError.code, constraint: driverError.constraint };
}

export const PG_UNIQUE_VIOLATION = '23505';
export const PG_FOREIGN_KEY_VIOLATION = '23503';
