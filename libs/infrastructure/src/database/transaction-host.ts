import { AsyncLocalStorage } from 'node:async_hooks';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { OutcomeUnknownError, UnitOfWork, WorkScope } from '@petstore/application';
import type { Pool, PoolClient, QueryConfig, QueryResult } from 'pg';
import { QueryFailedError } from 'typeorm';
import { DatabasePool } from './database-pool';
import { ReadReplicas } from './replicas/read-replicas';
import { dropsConnection, isClientReadTimeout, translateDriverError } from './driver-errors';
import { combinedText, ExpectedRows, HeldWrite, mismatchOf, overlaps, PendingWrite } from './session/held-write';
import { destroySocket, inOneWrite } from './session/pg-socket';

/** What a statement run through `TransactionHost.execute` returns. */
export interface StatementResult<T> {
  rows: T[];
  /** Rows the statement inserted, updated, deleted or returned (pg's `rowCount`). */
  affected: number;
}

/**
 * Behind a transaction pooler: the statement every transaction starts with (data-source.ts,
 * `transactionBoundsSql`), so the server-side bounds hold on whichever server session the pooler lends. Its
 * presence also tells TransactionHost not to name statements (`prepared`).
 */
export class TransactionPreamble {
  constructor(readonly sql: string) {}
}

/**
 * The transaction in progress, on a client of the pool. Its `BEGIN` and its held writes are not sent on their own:
 * they go with the transaction's next statement or with its `COMMIT`, in one write and one round trip (`send`).
 */
interface Transaction {
  client: PoolClient;
  /** Writes held back by `TransactionHost.hold` until the transaction's next statement or its commit. */
  held: PendingWrite[];
  /** `BEGIN` (and the preamble) sent. */
  begun: boolean;
  /** `COMMIT` sent: whatever it answers, the transaction is over (PostgreSQL rolls back one that failed). */
  ended: boolean;
  /** The connection broke, or was closed because a reply timed out: the pool must not lend it again. */
  lost?: Error;
  /** A statement failed on a plan made for a table as it was (`isStalePlan`): the unit of work may run again. */
  stalePlan?: boolean;
  /** The tables it changes (held writes, `hold`, and `changed`), for the `afterCommit` listeners. */
  written?: Set<string>;
}

/** Told after a transaction committed, with the tables it changed (`TransactionHost.afterCommit`). */
export type CommitListener = (tables: ReadonlySet<string>) => void;

/** One query of those `send` writes together; `writes`: the held writes it carries (their row checks). */
interface Piped {
  config: QueryConfig;
  writes?: PendingWrite[];
}

/** The texts `plannedEachRun` marks: sent unnamed, so PostgreSQL plans them for each run's parameters. */
const PLANNED_EACH_RUN = new Set<string>();

/**
 * Marks a statement text to be planned at each run rather than prepared once by name (TransactionHost.prepared), and
 * returns it. For a statement whose best plan depends on its parameters or on how large a table has grown, which a
 * named statement's generic plan does not follow: a batch joined to `unnest` of its arrays, planned while its table
 * was small, kept a sequential scan of the whole table as the table grew (99 ms per batch of 40, where the index
 * takes 1 ms). Planning costs a fraction of a millisecond: for statements that each do the work of many rows.
 */
export function plannedEachRun(sql: string): string {
  PLANNED_EACH_RUN.add(sql);
  return sql;
}

/** The names given to statement texts (`TransactionHost.prepared`): one per text, for every host of the process. */
const statementNames = new Map<string, string>();
const MAX_NAMED_STATEMENTS = 500;
/** Names given so far (a text named anew after a stale plan takes a new one: `replan`). */
let namesGiven = 0;

/**
 * Whether a statement failed on the plan PostgreSQL prepared for it when a table it reads had other columns (SQLSTATE
 * 0A000, "cached plan must not change result type"): a migration changed the table under a named statement of a
 * pooled connection (issue 50: 1.0.0's select of every column of `webhook_events` once one was added). Prepared
 * anew, the statement runs on the table as it is. Looked for through translation's wrapping (`cause`, TypeORM's
 * `driverError`).
 */
export function isStalePlan(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    const fields = current as { code?: unknown; message?: unknown; driverError?: unknown; cause?: unknown };
    if (fields.code === '0A000' && /cached plan must not change result type/.test(String(fields.message))) return true;
    current = fields.driverError ?? fields.cause;
  }
  return false;
}

/**
 * The database session of the command being run: holds its transaction, so that every repository called inside
 * `UnitOfWork.run` uses the same connection without passing it around.
 *
 * Repositories run their fixed SQL through `query`/`execute`: on the pg client the transaction took from the
 * service's pool (DatabasePool), or outside a transaction on a client of that pool; pg's public API throughout (its
 * pipeline mode), but for the one write per batch to the socket (session/pg-socket.ts). The errors are pg's error
 * wrapped in a QueryFailedError (as TypeORM's `manager.query` threw them), then translated (driver-errors.ts).
 */
@Injectable()
export class TransactionHost {
  private readonly current = new AsyncLocalStorage<Transaction>();
  /** What a transaction starts with: `BEGIN`, then, behind a pooler, the bounds (TransactionPreamble). */
  private readonly begin: QueryConfig[];
  private readonly commitListeners: CommitListener[] = [];

  constructor(
    @Inject(DatabasePool) private readonly pool: Pool,
    @Optional() private readonly preamble?: TransactionPreamble,
    /** DATABASE_REPLICA_URLS: where a statement outside a transaction may read (pooledStatement). */
    @Optional() private readonly replicas?: ReadReplicas,
  ) {
    if (!pool.options.pipeline) throw new Error('TransactionHost needs a pool in pipeline mode (see poolSettings).');
    this.begin = preamble ? [{ text: 'BEGIN' }, { text: preamble.sql }] : [{ text: 'BEGIN' }];
  }

  get inTransaction(): boolean {
    return this.current.getStore() !== undefined;
  }

  /**
   * Refuses to go on outside `UnitOfWork.run`: for what only means something in a transaction (a row lock, a write
   * that must commit with the rest). `what`: the operation, for the message.
   */
  requireTransaction(what: string): void {
    if (this.current.getStore() === undefined) throw new Error(`${what} needs a transaction (UnitOfWork.run).`);
  }

  /**
   * `listener` is told after every transaction of this host that committed with held writes (`hold`) or changes
   * reported (`changed`), the tables they changed, once the COMMIT answered and before the unit of work's caller
   * goes on (so before its HTTP answer): what must follow a commit and never a rollback, in this process (the
   * catalogue cache's own generations, the stock changes it announces to the other instances: CatalogueCommits).
   * Synchronous; what it throws is ignored.
   */
  afterCommit(listener: CommitListener): void {
    this.commitListeners.push(listener);
  }

  /**
   * The caller's statement (run with `query`/`execute`, not held) changed `table`: the `afterCommit` listeners are
   * told once its transaction committed, or at once outside a transaction (the statement committed on its own). Held
   * writes need no call: `hold` knows their table. Call it after the statement succeeded.
   */
  changed(table: string): void {
    if (!this.commitListeners.length) return;
    const transaction = this.current.getStore();
    if (transaction) (transaction.written ??= new Set()).add(table);
    else this.committed(new Set([table]));
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
   * writes held, as one statement, together with the transaction's next statement or its commit (a round trip is
   * the largest cost of a short transaction; an order's stock, order and event rows go with its COMMIT). Outside a
   * transaction it runs in one of its own. `expect`: the rows it must write, else the transaction fails with
   * `mismatch()` and nothing of it stays.
   *
   * Only for writes that cannot fail but by a bug or an outage: a failure surfaces where the batch is sent (a later
   * statement, or the commit), not at the caller's line, so a write whose error the caller turns into an answer
   * (a unique name, a missing reference) runs with `query`. `write` is a constant declared with `heldWrite` (its
   * verb, table and parameters: session/held-write.ts); the combined statements are cached by those constants. The
   * writes of one batch see the database as it was before the batch (one statement, one snapshot): a write that would
   * change a table another held UPDATE or DELETE changes (or update a table with an INSERT held) sends the batch
   * first, so it sees what they wrote.
   */
  async hold(write: HeldWrite, params: unknown[], expect?: ExpectedRows): Promise<void> {
    if (params.length !== write.params) {
      throw new Error(`A held write on ${write.table} takes ${write.params} parameters, not ${params.length}.`);
    }
    const transaction = this.current.getStore();
    if (!transaction) return this.transaction(() => this.hold(write, params, expect));
    if (transaction.held.some((held) => overlaps(held.write, write))) await this.send(transaction);
    transaction.held.push({ write, params, expect });
    if (this.commitListeners.length) (transaction.written ??= new Set()).add(write.table);
  }

  /**
   * Runs `work` in a transaction on one connection of the pool: its `BEGIN` goes with its first statement and its
   * `COMMIT` with its held writes (`send`). Nested calls join the transaction in progress.
   */
  transaction<T>(work: () => Promise<T>): Promise<T> {
    if (this.inTransaction) return work();
    return this.run(work);
  }

  /**
   * `retried`: this is the second run of `work`, after its first met a stale plan (`isStalePlan`). A failed statement
   * aborts its transaction, so the statement alone cannot be run again: the whole unit of work is, once, from the
   * start, on a new transaction, after the first rolled back. That is safe because a unit of work is the database's
   * alone here (its jobs are sent in the transaction, pg-boss's `db`); it is what a client's retry would do.
   */
  private async run<T>(work: () => Promise<T>, retried = false): Promise<T> {
    const client = await this.checkout();
    const transaction: Transaction = { client, held: [], begun: false, ended: false };
    // A checked-out client has no 'error' listener of the pool's: without this one, a connection lost between
    // two statements would be an uncaught 'error' event. The next statement fails with it.
    const onError = (error: Error) => (transaction.lost ??= error);
    client.on('error', onError);
    try {
      const result = await this.current.run(transaction, work);
      // Nothing sent, nothing held: there is no transaction to end.
      if (transaction.begun || transaction.held.length) await this.send(transaction, { text: 'COMMIT' }, true);
      if (transaction.written) this.committed(transaction.written);
      return result;
    } catch (error) {
      if (transaction.begun && !transaction.ended && !transaction.lost) {
        await client.query('ROLLBACK').catch((lost: Error) => (transaction.lost ??= lost));
      }
      if (!(transaction.stalePlan && !retried && !transaction.ended && isStalePlan(error))) {
        throw translateDriverError(error);
      }
    } finally {
      client.removeListener('error', onError);
      client.release(transaction.lost);
    }
    return this.run(work, true);
  }

  private committed(tables: ReadonlySet<string>): void {
    for (const listener of this.commitListeners) {
      try {
        listener(tables);
      } catch {
        // A listener's failure is its own (it logs it): the transaction committed, and its caller is answered.
      }
    }
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
    if (this.preamble || PLANNED_EACH_RUN.has(sql)) return { text: sql, values: params };
    let name = statementNames.get(sql);
    if (name === undefined && statementNames.size < MAX_NAMED_STATEMENTS) {
      statementNames.set(sql, (name = `petstore_${namesGiven++}`));
    }
    return name === undefined ? { text: sql, values: params } : { name, text: sql, values: params };
  }

  /**
   * A named statement whose plan went stale (`isStalePlan`) gets a new name: every connection of the process then
   * prepares it anew at its next use, on the table as it is, rather than each failing once with the old name (the
   * pooled connections all hold the old plan). The old prepared statement stays on the connections that have it,
   * unused, until they close.
   */
  private replan(sql: string): void {
    if (statementNames.has(sql)) statementNames.set(sql, `petstore_${namesGiven++}`);
  }

  private async statement(sql: string, params?: unknown[]): Promise<QueryResult> {
    const transaction = this.current.getStore();
    if (!transaction) return this.pooledStatement(sql, params);
    const answers = await this.send(transaction, this.prepared(sql, params));
    return answers[answers.length - 1];
  }

  /**
   * Sends what the transaction has pending (its `BEGIN`, its held writes as one statement) and then `last`, in one
   * write to the socket: the pool's clients are in pg's pipeline mode, which sends a query without waiting for the
   * answer to the one before, and `inOneWrite` corks the socket meanwhile. PostgreSQL runs them in order; once one
   * fails the rest fail with it (the transaction is aborted), and a `COMMIT` among them rolls back. Resolves with every
   * answer, or rejects with the first failure, translated, once all have answered (the connection is idle again).
   */
  private async send(transaction: Transaction, last?: QueryConfig, ends = false): Promise<QueryResult[]> {
    if (transaction.lost) throw translateDriverError(transaction.lost);
    // The request was answered already (handler timeout, shutdown): nothing more is sent, its COMMIT least of all;
    // `run` rolls back.
    const scope = WorkScope.current();
    if (scope?.cutOff) throw scope.cutOff;
    const queries: Piped[] = [];
    if (!transaction.begun) {
      for (const config of this.begin) queries.push({ config });
      transaction.begun = true;
    }
    if (transaction.held.length) queries.push(this.batch(transaction.held.splice(0)));
    if (last) queries.push({ config: last });
    if (ends) transaction.ended = true;

    const { client } = transaction;
    const answers = inOneWrite(client, () => queries.map(({ config }) => client.query(config)));
    // From here a cut-off request's outcome is unknown: its COMMIT may hold.
    if (ends && scope) scope.commitsInFlight++;
    const settled = await Promise.allSettled(answers);
    if (ends && scope) scope.commitsInFlight--;
    const failed = settled.findIndex((answer) => answer.status === 'rejected');
    if (failed === -1) return settled.map((answer) => (answer as PromiseFulfilledResult<QueryResult>).value);
    const error = (settled[failed] as PromiseRejectedResult).reason as Error;
    const { config, writes } = queries[failed];
    if (isStalePlan(error)) {
      this.replan(config.text);
      transaction.stalePlan = true;
    }
    const translated =
      mismatchOf(writes, error) ?? translateDriverError(new QueryFailedError(config.text, config.values, error));
    // pg closes a connection whose reply timed out in pipeline mode; one the server ended or that is read-only (a
    // demoted primary) is no better: it must leave the pool.
    const broke = isClientReadTimeout(error) || dropsConnection(translated);
    if (broke) transaction.lost ??= error;
    this.demoted(error);
    // A COMMIT that never answered (the connection broke, or its reply was given up on) may have committed: unless
    // the server refused the batch itself (read-only, 25006: nothing of it ran), nobody can tell.
    if (ends && broke && (error as { code?: string }).code !== '25006') {
      throw new OutcomeUnknownError(`The outcome of the COMMIT is unknown: ${error.message}`, { cause: error });
    }
    throw translated;
  }

  /** The held writes as one statement: alone if it is one whose rows are not checked, else `combinedText`. */
  private batch(writes: PendingWrite[]): Piped {
    if (writes.length === 1 && !writes[0].expect) {
      return { config: this.prepared(writes[0].write.text, writes[0].params) };
    }
    const params = writes.flatMap((write) => write.params);
    for (const { expect } of writes) if (expect) params.push(expect.rows);
    return { config: this.prepared(combinedText(writes), params), writes };
  }

  /**
   * A client of the pool, never one opened before the last read-only answer (`demoted`): after a failover, the pool's
   * other connections to the demoted primary still answer reads (stale ones) and `pg_notify` (the LISTEN heartbeat
   * would go on proving a listener on the wrong server), so each is closed as it comes out of the pool, and a new
   * one opened through the endpoint, which reaches the new primary.
   */
  private async checkout(pool: Pool = this.pool): Promise<PoolClient> {
    watchConnections(pool);
    try {
      for (;;) {
        const client = await pool.connect();
        const demotedAt = demoted.get(pool) ?? 0;
        if (demotedAt === 0 || ((client as Born)[BORN] ?? 0) > demotedAt) return client;
        client.release(new Error('Opened before the database answered read-only (a failover): closed.'));
      }
    } catch (error) {
      throw translateDriverError(error);
    }
  }

  /** A connection answered read-only (25006): every connection of the pool opened until now is suspect. */
  private demoted(error: unknown): void {
    if ((error as { code?: string } | null)?.code === '25006') demoted.set(this.pool, performance.now());
  }

  /**
   * One statement outside a transaction: on the primary, or, inside a ReadScope (a GET whose route may read from a
   * replica, see ReadReplicas), on the replica the scope picks; one that fails there for want of an answer is run
   * again on the primary. Without replicas configured `replicas` is undefined and this is one property read.
   */
  private async pooledStatement(sql: string, params?: unknown[]): Promise<QueryResult> {
    const scope = this.replicas?.current();
    if (!scope) return this.statementOn(this.pool, sql, params);
    const replicas = this.replicas as ReadReplicas;
    // A request already answered (cut off) sends nothing: its error is not the replica's failure.
    const cutOff = WorkScope.current()?.cutOff;
    if (cutOff) throw cutOff;
    const replica = replicas.pick(scope);
    if (replica) {
      try {
        const result = await this.statementOn(replica.pool, sql, params);
        replicas.served(scope, replica);
        return result;
      } catch (error) {
        if (!replicas.failed(scope, replica, error)) throw error;
      }
    }
    const result = await this.statementOn(this.pool, sql, params);
    replicas.served(scope, undefined);
    return result;
  }

  /**
   * One statement on a pooled client. Not `pool.query`: that discards the connection after any
   * error, a unique violation too; here only a connection lost and one whose reply timed out (still busy with the
   * statement) are dropped.
   */
  private async statementOn(pool: Pool, sql: string, params?: unknown[]): Promise<QueryResult> {
    const cutOff = WorkScope.current()?.cutOff;
    if (cutOff) throw cutOff;
    const client = await this.checkout(pool);
    // As in `run`: a connection lost meanwhile would otherwise be an uncaught 'error' event.
    let broken: Error | undefined;
    const onError = (error: Error) => (broken = error);
    client.on('error', onError);
    try {
      // A stale plan (`isStalePlan`: a migration changed a table under the named statement) is prepared anew under
      // a new name and run again, once: outside a transaction nothing else was undone by the failure.
      return await client.query(this.prepared(sql, params)).catch((error: unknown) => {
        if (!isStalePlan(error)) throw error;
        this.replan(sql);
        return client.query(this.prepared(sql, params));
      });
    } catch (error) {
      const translated = translateDriverError(new QueryFailedError(sql, params, error as Error));
      if (isClientReadTimeout(error)) {
        broken = error as Error;
        destroySocket(client);
      } else if (dropsConnection(translated)) {
        // The server ended the session (57P01…), pg may not have seen the socket close yet; or it is read-only.
        broken = error as Error;
        if (pool === this.pool) this.demoted(error);
      }
      throw translated;
    } finally {
      client.removeListener('error', onError);
      client.release(broken);
    }
  }
}

/** When each pool's connections were last found on a read-only server (performance.now()); 0: never. */
const demoted = new WeakMap<Pool, number>();
/** When a connection was opened (performance.now()), set by the pool's 'connect' event. */
const BORN = Symbol('born');
type Born = { [BORN]?: number };
const watched = new WeakSet<Pool>();

function watchConnections(pool: Pool): void {
  if (watched.has(pool)) return;
  watched.add(pool);
  pool.on('connect', (client) => ((client as Born)[BORN] = performance.now()));
}

/** The UnitOfWork port on PostgreSQL: a use case's transaction is TransactionHost's. */
@Injectable()
export class PgUnitOfWork extends UnitOfWork {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    return this.host.transaction(work);
  }
}
