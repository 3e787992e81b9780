import { acquireTestDatabaseServer } from './test-database-server';

/**
 * Jest `globalSetup` of every project whose tests use PostgreSQL: picks the server
 * (TEST_DATABASE_URL, else testcontainers, else embedded), migrates a template database once and
 * publishes it to the workers through the environment. Safe to declare in several projects that
 * run in one jest process: only the first provisions.
 */
export default async function globalSetup(): Promise<void> {
  await acquireTestDatabaseServer();
}
