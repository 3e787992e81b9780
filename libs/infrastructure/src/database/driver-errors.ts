import {
  ApplicationError,
  ConcurrentUpdateError,
  ConstraintViolationError,
  InvalidStoredValueError,
  StoreUnavailableError,
} from '@petstore/application';
import { DomainError } from '@petstore/domain';
import {
  DataSource,
  QueryFailedError,
  QueryRunner,
  QueryRunnerAlreadyReleasedError,
  QueryRunnerProviderAlreadyReleasedError,
} from 'typeorm';
import { destroySocket } from './session/pg-socket';

/**
 * The one place that reads PostgreSQL and driver errors (SQLSTATE codes, and the messages of
 * pg and pg-pool, which carry no code): each becomes one of the persistence errors of the
 * application layer. Anything else is returned as it is (a bug, to be reported as such).
 */
export function translateDriverError(error: unknown): unknown {
  if (error instanceof ApplicationError || error instanceof DomainError) return error;
  const driverError =
    error instanceof QueryFailedError ? (error.driverError as PgErrorFields) : (error as PgErrorFields);
  const code = typeof driverError?.code === 'string' ? driverError.code : '';
  const message = typeof driverError?.message === 'string' ? driverError.message : '';
  const options = { cause: error };
  // The driver's words stay in the message, for the logs; clients never see it (the API answers in its own).
  const said = (summary: string) => (message ? `${summary}: ${message}` : `${summary}.`);

  if (error instanceof QueryRunnerAlreadyReleasedError || error instanceof QueryRunnerProviderAlreadyReleasedError) {
    // The connection broke between two statements of a transaction: pg reported it, TypeORM released it.
    return new StoreUnavailableError('connection_lost', said('The database connection was lost'), options);
  }
  if (code === '57014' || code === '55P03' || message === READ_TIMEOUT) {
    // statement_timeout / lock_timeout (server side), query_timeout (client side).
    return new StoreUnavailableError('timeout', said('The database did not answer in time'), options);
  }
  if (message === ACQUIRE_TIMEOUT) {
    return new StoreUnavailableError('timeout', said('No database connection became available in time'), options);
  }
  if (code.startsWith('08') || CONNECTION_SQLSTATES.has(code) || connectionLost(message)) {
    return new StoreUnavailableError('connection_lost', said('The database connection was lost'), options);
  }
  if (code === '25006') {
    // read_only_sql_transaction: the session is on a server that no longer takes writes (a primary demoted by a
    // failover, a standby). Like a lost connection: the pool must drop it and open one to the new primary.
    return new StoreUnavailableError('connection_lost', said('The database connection is read-only'), options);
  }
  if (
    NETWORK_ERRORS.has(code) ||
    code.startsWith('53') ||
    code.startsWith('55') ||
    code.startsWith('57') ||
    message === POOL_CLOSED
  ) {
    // Class 55 (55000 "database … is not currently accepting connections") and the rest of class 57 (operator
    // intervention, the database dropped): the database is there but refuses work for now.
    return new StoreUnavailableError('unreachable', said('The database cannot be reached'), options);
  }
  if (code === '40001' || code === '40P01') {
    return new ConcurrentUpdateError(said('A concurrent transaction conflicted with this one'), options);
  }
  const constraintKind = CONSTRAINT_KINDS.get(code);
  if (constraintKind) {
    return new ConstraintViolationError(
      constraintKind,
      driverError.constraint,
      said(`A ${constraintKind} constraint was violated`),
      options,
    );
  }
  if (code.startsWith('22')) {
    return new InvalidStoredValueError(said('The database cannot store a value as given'), options);
  }
  return error;
}

interface PgErrorFields {
  code?: unknown;
  message?: unknown;
  constraint?: string;
}

/**
 * Class 08 aside: the server shut the session down
 * (admin/crash shutdown, starting up, idle-in-transaction timeout).
 */
const CONNECTION_SQLSTATES = new Set(['57P01', '57P02', '57P03', '57P05', '25P03']);
const NETWORK_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'EAI_AGAIN',
]);
const CONSTRAINT_KINDS = new Map<string, ConstraintViolationError['constraintKind']>([
  ['23505', 'unique'],
  ['23503', 'foreign_key'],
  ['23514', 'check'],
  ['23502', 'not_null'],
  ['23P01', 'exclusion'],
]);
// pg's own errors have no code, only these messages (compared as they are, no pattern).
/**
 * Whether a translated timeout (`StoreUnavailableError` 'timeout') was the statement's own cost: cancelled by its
 * `statement_timeout` (57014), or no pooled connection free in time. Not a server that stopped answering (a reply that
 * never came, READ_TIMEOUT) nor a lock wait (55P03).
 */
export function isStatementCostTimeout(error: StoreUnavailableError): boolean {
  const cause = error.cause as (PgErrorFields & { driverError?: PgErrorFields }) | undefined;
  const driverError = cause?.driverError ?? cause;
  return error.reason === 'timeout' && (driverError?.code === '57014' || driverError?.message === ACQUIRE_TIMEOUT);
}

const READ_TIMEOUT = 'Query read timeout';
const ACQUIRE_TIMEOUT = 'timeout exceeded when trying to connect';
const POOL_CLOSED = 'Cannot use a pool after calling end on the pool';

/** pg's words for a connection that ended ("Connection terminated unexpectedly", "Client … is not queryable"). */
function connectionLost(message: string): boolean {
  return message.startsWith('Connection terminated') || message.endsWith('is not queryable');
}

/**
 * Makes every query runner of the data source throw translated errors. TypeORM has no hook
 * that may replace an error (subscribers only observe), and every statement, transaction
 * command and connection acquisition goes through `QueryRunner.query`, so the runners the
 * driver creates are wrapped here, once, instead of a try/catch in every repository. What
 * TypeORM raises outside a runner (a transaction's runner already released) is translated
 * where transactions are run, in TransactionHost.
 *
 * A reply that timed out on the client side (`query_timeout`) leaves its connection with an
 * unanswered statement: the connection is closed so that the pool drops it rather than hand it
 * to the next request, which would wait behind that statement.
 */
export function translateDriverErrors(dataSource: DataSource): DataSource {
  const driver = dataSource.driver;
  const createQueryRunner = driver.createQueryRunner.bind(driver);
  driver.createQueryRunner = (mode) => {
    const runner: QueryRunner = createQueryRunner(mode);
    const query = runner.query.bind(runner) as QueryRunner['query'];
    runner.query = (async (...args: Parameters<QueryRunner['query']>) => {
      try {
        return await query(...args);
      } catch (error) {
        const translated = translateDriverError(error);
        if (isClientReadTimeout(error) || dropsConnection(translated)) await dropConnection(runner);
        throw translated;
      }
    }) as QueryRunner['query'];
    return runner;
  };
  return dataSource;
}

/**
 * Whether the connection an error came from must leave the pool: lost, ended by the server, or read-only (25006,
 * see `translateDriverError`). The pool would otherwise lend it again, and the next request would fail the same way.
 */
export function dropsConnection(translated: unknown): boolean {
  return translated instanceof StoreUnavailableError && translated.reason === 'connection_lost';
}

/** A reply that pg gave up waiting for (`query_timeout`): the connection is still busy with the statement. */
export function isClientReadTimeout(error: unknown): boolean {
  const driverError = error instanceof QueryFailedError ? error.driverError : error;
  return (driverError as { message?: unknown } | null)?.message === READ_TIMEOUT;
}

/**
 * Closes the runner's connection and waits until pg has reported it lost: by then TypeORM has
 * released the runner with that error, which makes the pool discard the connection.
 */
export async function dropConnection(runner: QueryRunner): Promise<void> {
  if (runner.isReleased) return;
  // connect() resolves at once with the runner's pg client.
  const client = (await runner.connect().catch(() => undefined)) as NodeJS.EventEmitter | undefined;
  if (!client) return;
  const ended = new Promise<void>((resolve) => {
    client.once('end', () => resolve());
    setTimeout(resolve, 1000).unref();
  });
  if (destroySocket(client)) await ended;
}

/** Whether `error` is a violation of a constraint of this kind (and name, when given): for repositories. */
export function violated(
  error: unknown,
  kind: ConstraintViolationError['constraintKind'],
  constraint?: string,
): boolean {
  return (
    error instanceof ConstraintViolationError &&
    error.constraintKind === kind &&
    (constraint === undefined || error.constraint === constraint)
  );
}
