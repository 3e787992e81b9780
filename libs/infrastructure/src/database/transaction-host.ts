import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable, Optional } from '@nestjs/common';
import { StoreUnavailableError, UnitOfWork } from '@petstore/application';
import type { Pool, PoolClient, QueryConfig, QueryResult } from 'pg';
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
 * `transactionBoundsSql`), so the server-side bounds hold on whichever server session the pooler lends. Its
 * presence also tells TransactionHost not to name statements (`prepared`).
 */
export class TransactionPreamble {
  constructor(readonly sql: string) {}
}

/**
 * A write held back by `TransactionHost.hold` until the transaction's next statement or its commit. `rows`: how many
 * rows it must write (checked when it is sent; `mismatch` makes the error), if the caller used to check.
 */
interface HeldWrite {
  sql: string;
  params: unknown[];
  expect?: { rows: number; mismatch: () => Error };
}

/** The transaction in progress: TypeORM's manager on its connection, and the writes held back (`hold`). */
interface Transaction {
  manager: EntityManager;
  held: HeldWrite[];
}

/** The names given to statement texts (`TransactionHost.prepared`): one per text, for every host of the process. */
const statementNames = new Map<string, string>();
const MAX_NAMED_STATEMENTS = 500;

@Injectable()
export class TransactionHost {
  private readonly current = new AsyncLocalStorage<Transaction>();

  constructor(
    private readonly dataSource: DataSource,
    @Optional() private readonly preamble?: TransactionPreamble,
  ) {}

  /** The transaction's manager inside `UnitOfWork.run`, else the pool's. */
  get manager(): EntityManager {
    return this.current.getStore()?.manager ?? this.dataSource.manager;
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

  /**
   * A write whose outcome the caller does not read: inside a transaction it is held back and sent with the other
   * writes held, as one statement, just before the transaction's next statement or its commit (a statement each is
   * a round trip, the largest cost of a short transaction; an order's stock, order and event rows go in one).
   * Outside a transaction it runs at once. `expect`: the rows it must write, else the transaction fails with
   * `mismatch()`.
   *
   * Only for writes that cannot fail but by a bug or an outage: a failure surfaces where the batch is sent (a later
   * statement, or the commit), not at the caller's line, so a write whose error the caller turns into an answer
   * (a unique name, a missing reference) runs with `query`. One plain INSERT, UPDATE or DELETE, a constant text (the
   * combined statements are cached by text) with `$n` parameters,
   * no RETURNING, no `$` in literals. The writes of one batch see the database as it was before the batch (one
   * statement, one snapshot): a write that would change a table another held UPDATE or DELETE changes (or update a
   * table with an INSERT held) sends the batch first, so it sees what they wrote.
   */
  async hold(sql: string, params: unknown[], expect?: HeldWrite['expect']): Promise<void> {
    const transaction = this.current.getStore();
    if (!transaction) {
      await this.send([{ sql, params, expect }]);
      return;
    }
    if (transaction.held.some((held) => overlaps(held.sql, sql))) await this.sendHeld(transaction);
    transaction.held.push({ sql, params, expect });
  }

  transaction<T>(work: () => Promise<T>): Promise<T> {
    if (this.inTransaction) return work();
    // A transaction whose connection broke between statements fails in TypeORM itself, outside
    // the query runner's translation (driver-errors.ts): translated here.
    const preamble = this.preamble?.sql;
    return this.dataSource
      .transaction(async (manager) => {
        if (preamble) await manager.query(preamble);
        const transaction: Transaction = { manager, held: [] };
        return this.current.run(transaction, async () => {
          const result = await work();
          await this.sendHeld(transaction);
          return result;
        });
      })
      .catch((error: unknown) => {
        throw translateDriverError(error);
      });
  }

  /**
   * The statement, named: PostgreSQL parses and plans a named statement once per connection and then only binds
   * and runs it (an order's lock statement and its combined write cost the database about a third less CPU; the
   * bench's orders went from 0.74× to 0.97× of the minimal handler with this alone). The repositories' SQL is
   * constant text, so each text gets one name for the life of the process (`statementNames`); at most
   * MAX_NAMED_STATEMENTS texts are named, the rest sent unnamed, so a connection holds a bounded number.
   * Behind a transaction pooler (a TransactionPreamble is given) nothing is named: consecutive transactions may
   * run on different server sessions, which PgBouncer before 1.21 does not follow for named statements.
   */
  private prepared(sql: string, params?: unknown[]): QueryConfig {
    if (this.preamble) return { text: sql, values: params };
    let name = statementNames.get(sql);
    if (name === undefined && statementNames.size < MAX_NAMED_STATEMENTS) {
      statementNames.set(sql, (name = `petstore_${statementNames.size}`));
    }
    return name === undefined ? { text: sql, values: params } : { name, text: sql, values: params };
  }

  private async statement(sql: string, params?: unknown[]): Promise<QueryResult> {
    const transaction = this.current.getStore();
    if (!transaction) return this.pooledStatement(sql, params);
    if (transaction.held.length) await this.sendHeld(transaction);
    return this.inTransactionStatement(transaction.manager.queryRunner as QueryRunner, sql, params);
  }

  private sendHeld(transaction: Transaction): Promise<void> {
    return this.send(transaction.held.splice(0));
  }

  /** The writes as one statement: one `WITH` of data-modifying statements, counting the rows of those checked. */
  private async send(writes: HeldWrite[]): Promise<void> {
    if (writes.length === 0) return;
    if (writes.length === 1) {
      const [{ sql, params, expect }] = writes;
      const { rowCount } = await this.statement(sql, params);
      if (expect && rowCount !== expect.rows) throw expect.mismatch();
      return;
    }
    const params = writes.flatMap((write) => write.params);
    const [row] = (await this.statement(combined(writes), params)).rows as Array<Record<string, number>>;
    for (const [i, { expect }] of writes.entries()) {
      if (expect && row[`w${i}`] !== expect.rows) throw expect.mismatch();
    }
  }

  private async inTransactionStatement(runner: QueryRunner, sql: string, params?: unknown[]): Promise<QueryResult> {
    // Released: the connection broke (pg reported it, TypeORM released the runner) or the
    // transaction is over; its client may be someone else's by now.
    if (runner.isReleased) throw translateDriverError(new QueryRunnerAlreadyReleasedError());
    const client = connectionOf(runner) ?? ((await runner.connect()) as PoolClient);
    try {
      return await client.query(this.prepared(sql, params));
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
      return await client.query(this.prepared(sql, params));
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

/**
 * The writes as one statement: `WITH w0 AS (…), w1 AS (…) SELECT` the row counts of those checked, each write's
 * `$n` renumbered after the parameters of those before it. The few shapes a process sends (an order's three writes,
 * say) are built once: the cache is a tree keyed by the SQL texts, which are the repositories' constants.
 */
function combined(writes: HeldWrite[]): string {
  let node = combinedCache;
  for (const { sql, expect } of writes) {
    const next = expect ? node.checked : node.unchecked;
    let child = next.get(sql);
    if (!child) next.set(sql, (child = { checked: new Map(), unchecked: new Map() }));
    node = child;
  }
  if (node.text === undefined) {
    let offset = 0;
    const parts = writes.map(({ sql, params, expect }, i) => {
      const base = offset;
      offset += params.length;
      const renumbered = sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + base}`);
      return `w${i} AS (${renumbered}${expect ? ' RETURNING 1' : ''})`;
    });
    const counts = writes.flatMap(({ expect }, i) => (expect ? [`(SELECT count(*)::int FROM w${i}) AS w${i}`] : []));
    node.text = `WITH ${parts.join(', ')} SELECT ${counts.join(', ') || '1'}`;
  }
  return node.text;
}

interface CombinedNode {
  checked: Map<string, CombinedNode>;
  unchecked: Map<string, CombinedNode>;
  text?: string;
}

const combinedCache: CombinedNode = { checked: new Map(), unchecked: new Map() };

/**
 * Whether `next` must see what `held` writes: one of them updates or deletes in a table the other writes to. Two
 * INSERTs into one table add different rows and may share a statement.
 */
function overlaps(held: string, next: string): boolean {
  const a = writeTarget(held);
  const b = writeTarget(next);
  return a.table === b.table && (a.verb !== 'INSERT' || b.verb !== 'INSERT');
}

/** What each SQL text writes, read once per text (they are the repositories' constants). */
const writeTargets = new Map<string, { verb: string; table: string }>();

function writeTarget(sql: string): { verb: string; table: string } {
  let target = writeTargets.get(sql);
  if (!target) writeTargets.set(sql, (target = readWriteTarget(sql)));
  return target;
}

function readWriteTarget(sql: string): { verb: string; table: string } {
  const match = /^\s*(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+("?[\w.]+"?)/i.exec(sql);
  if (!match) throw new Error(`Not a plain INSERT, UPDATE or DELETE: ${sql.slice(0, 60)}`);
  return { verb: match[1].split(/\s/)[0].toUpperCase(), table: match[2].replace(/"/g, '').toLowerCase() };
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
