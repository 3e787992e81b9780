import { releaseTestDatabaseServer } from './test-database-server';

/**
 * Jest `globalTeardown` paired with `global-setup.ts`: the last one in the process drops the
 * databases the run created on a shared server and stops the container or embedded server.
 */
export default async function globalTeardown(): Promise<void> {
  await releaseTestDatabaseServer();
}
