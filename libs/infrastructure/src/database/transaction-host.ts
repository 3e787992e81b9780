import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable, Optional } from '@nestjs/common';
import { StoreUnavailableError, UnitOfWork } from '@petstore/application';
import type { Pool, PoolClient, QueryResult } from 'pg';
import { DataSource, EntityManager, QueryFailedError, QueryRunner, QueryRunnerAlreadyReleasedError } from 'typeorm';
import { dropConnection, isClientReadTimeout, translateDriverError } from './driver-errors';

/** What a statement run through `TransactionHost.execute` returns. */
export interface StatementResult<T> {
  rows: T[];
  /** Rows the statement inserted, updated, deleted or returned (pg's `rowCount`). */
  affected: number;
}

/**
 * Holds the transaction of the command being run, so that every repository called
 * inside `UnitOfWork.run` uses the same connection without passing it around.
 *
 * Repositories run their fixed SQL through `query`/`execute`: straight on the pg client of the
 * transaction (the TypeORM query runner's connection), or on a client of the pool TypeORM owns,
 * without TypeORM's per-statement machinery (a query runner per statement outside a transaction,
 * logger and broadcaster on every statement). The errors are those of `manager.query`: pg's
 * error wrapped in a QueryFailedError, then translated (driver-errors.ts).
 */
/**
 * Behind a transaction pooler: the statement every transaction starts with (data-source.ts,
 * `transactionBoundsSql`), so the server-side bounds hold on whichever server session the pooler lends.
 */
export class TransactionPreamble {
  constructor(readonly sql: string) {}
}

@Injectable()
export class TransactionHost {
  private readonly current = new AsyncLocalStorage<EntityManager>();

  constructor(
    private readonly dataSource: DataSource,
    @Optional() private readonly preamble?: TransactionPreamble,
  ) {}

  /** The transaction's manager inside `UnitOfWork.run`, else the pool's. */
  get manager(): EntityManager {
    return this.current.getStore() ?? this.dataSource.manager;
  }

  get inTransaction(): boolean {
    return this.current.getStore() !== undefined;
  }

  /** Runs one statement (inside `UnitOfWork.run`, in its transaction) and returns its rows. */
  async query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]> {
    return (await this.statement(sql, params)).rows as T[];
  }

  /** Like `query`, with the count of rows affected (for UPDATE and DELETE). */
  async execute<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<StatementResult<T>> {
    const result = await this.statement(sql, params);
    return { rows: result.rows as T[], affected: result.rowCount ?? 0 };
  }

  transaction<T>(work: () => Promise<T>): Promise<T> {
    if (this.inTransaction) return work();
    // A transaction whose connection broke between statements fails in TypeORM itself, outside
    // the query runner's translation (driver-errors.ts): translated here.
    const preamble = this.preamble?.sql;
    return this.dataSource
      .transaction(async (manager) => {
        if (preamble) await manager.query(preamble);
        return this.current.run(manager, work);
      })
      .catch((error: unknown) => {
        throw translateDriverError(error);
      });
  }

  private statement(sql: string, params?: unknown[]): Promise<QueryResult> {
    const runner = this.current.getStore()?.queryRunner;
    return runner ? this.inTransactionStatement(runner, sql, params) : this.pooledStatement(sql, params);
  }

  private async inTransactionStatement(runner: QueryRunner, sql: string, params?: unknown[]): Promise<QueryResult> {
    // Released: the connection broke (pg reported it, TypeORM released the runner) or the
    // transaction is over; its client may be someone else's by now.
    if (runner.isReleased) throw translateDriverError(new QueryRunnerAlreadyReleasedError());
    const client = connectionOf(runner) ?? ((await runner.connect()) as PoolClient);
    try {
      return await client.query(sql, params);
    } catch (error) {
      if (isClientReadTimeout(error)) await dropConnection(runner);
      throw translateDriverError(new QueryFailedError(sql, params, error as Error));
    }
  }

  /**
   * One statement on a pooled client. Not `pool.query`: that discards the connection after any
   * error, a unique violation too, where TypeORM keeps it; here only a connection lost and one whose
   * reply timed out (still busy with the statement) are dropped.
   */
  private async pooledStatement(sql: string, params?: unknown[]): Promise<QueryResult> {
    const pool = (this.dataSource.driver as unknown as { master: Pool }).master;
    let client: PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      throw translateDriverError(error);
    }
    // A checked-out client has no 'error' listener of the pool's: without this one, a connection
    // lost meanwhile would be an uncaught 'error' event. The query fails with it anyway.
    let broken: Error | undefined;
    const onError = (error: Error) => (broken = error);
    client.on('error', onError);
    try {
      return await client.query(sql, params);
    } catch (error) {
      const translated = translateDriverError(new QueryFailedError(sql, params, error as Error));
      if (isClientReadTimeout(error)) {
        broken = error as Error;
        (client as PoolClient & PgConnection).connection?.stream?.destroy();
      } else if (translated instanceof StoreUnavailableError && translated.reason === 'connection_lost') {
        // The server ended the session (57P01…): pg may not have seen the socket close yet.
        broken = error as Error;
      }
      throw translated;
    } finally {
      client.removeListener('error', onError);
      client.release(broken);
    }
  }
}

type PgConnection = { connection?: { stream?: { destroy(): void } } };

/** The pg client under a postgres query runner, once connected (a transaction has started on it). */
function connectionOf(runner: QueryRunner): PoolClient | undefined {
  return (runner as unknown as { databaseConnection?: PoolClient }).databaseConnection;
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
