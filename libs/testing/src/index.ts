export {
  TEST_DATABASE_ENV,
  TEST_DATABASE_PREFIX,
  assertTestDatabaseName,
  assertTestDatabaseUrl,
  createMigratedDatabase,
  databaseNameOf,
  resetDatabase,
  testDatabaseUrl,
  withDatabaseName,
} from './test-database';
export { StoreRows } from './store-rows';
export { acquireTestDatabaseServer, releaseTestDatabaseServer } from './test-database-server';
export type { AcquireOptions } from './test-database-server';
