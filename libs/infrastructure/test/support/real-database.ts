import { anAccount } from '@petstore/application/testing';
import type { Role } from '@petstore/domain';
import { resetDatabase, testDatabaseUrl } from '@petstore/testing';
import { DataSource } from 'typeorm';
import { createDataSource } from '../../src/database/data-source';
import { DatabasePool } from '../../src/database/database-pool';
import { PgUnitOfWork, TransactionHost } from '../../src/database/transaction-host';
import { PgAccountRepository } from '../../src/persistence/account/pg-account.repository';
import { PgApiKeyRepository } from '../../src/persistence/account/pg-api-key.repository';
import { PgCategoryRepository } from '../../src/persistence/category/pg-category.repository';
import { PgIdempotencyStore } from '../../src/persistence/idempotency/pg-idempotency-store.repository';
import { PgMessageRepository } from '../../src/persistence/message/pg-message.repository';
import { PgOrderRepository } from '../../src/persistence/order/pg-order.repository';
import { PgOpenOrders } from '../../src/persistence/order/pg-open-orders.repository';
import { PgPetRepository } from '../../src/persistence/pet/pg-pet.repository';
import { PgStockLevels } from '../../src/persistence/stock/pg-stock-levels.repository';
import { PgStockRepository } from '../../src/persistence/stock/pg-stock.repository';

/*
 * Test support of libs/infrastructure's specs (tests only): this jest worker's real database, opened
 * for a describe block, and the repositories on it. The test data itself comes from the builders of
 * @petstore/application/testing (`anAccount()`, `aCategory()`, `aPet().withStock(n)`), which store
 * through these repositories as they do through the in-memory fakes.
 */

export interface TestDatabase {
  /** This jest worker's database (libs/testing). */
  readonly url: string;
  /** The service's pool, as the service opens it: the one `host` runs on. */
  readonly pool: DatabasePool;
  /** A TypeORM data source on the same database, of its own pool: for the tests' own statements and sessions. */
  readonly dataSource: DataSource;
  /** The TransactionHost on `pool`, as the repositories take it. */
  readonly host: TransactionHost;
}

/**
 * This jest worker's test database for the enclosing describe: a pool and a data source opened before its tests
 * (beforeAll; with `reset`, every table emptied first) and closed after them (afterAll). Call it before
 * the describe's own hooks, which then find it open; its fields are set from beforeAll on.
 */
export function useTestDatabase(options: { reset?: boolean } = {}): TestDatabase {
  const db = {} as { url: string; pool: DatabasePool; dataSource: DataSource; host: TransactionHost };
  beforeAll(async () => {
    db.url = await testDatabaseUrl();
    if (options.reset) await resetDatabase(db.url);
    db.dataSource = await createDataSource(db.url).initialize();
    db.pool = new DatabasePool(db.url);
    db.host = new TransactionHost(db.pool);
  });
  afterAll(async () => {
    await db.pool?.close();
    await db.dataSource?.destroy();
  });
  return db;
}

/**
 * The repositories and the unit of work on `host`, new objects each call (so PgApiKeyRepository's memory
 * of touched keys starts empty): what the port contract suites and the builders' `saveIn` take.
 */
export function pgRepositories(host: TransactionHost) {
  return {
    accounts: new PgAccountRepository(host),
    apiKeys: new PgApiKeyRepository(host),
    categories: new PgCategoryRepository(host),
    pets: new PgPetRepository(host),
    stocks: new PgStockRepository(host),
    stockLevels: new PgStockLevels(host),
    orders: new PgOrderRepository(host),
    openOrders: new PgOpenOrders(host),
    messages: new PgMessageRepository(host),
    idempotency: new PgIdempotencyStore(host),
    uow: new PgUnitOfWork(host),
  };
}

export type PgRepositories = ReturnType<typeof pgRepositories>;

/** The id of a new account (a customer unless `role` says otherwise), stored through `accounts`. */
export async function newAccountId(accounts: PgAccountRepository, role: Role = 'customer'): Promise<number> {
  return (await (role === 'admin' ? anAccount().admin() : anAccount()).saveIn({ accounts })).id;
}
