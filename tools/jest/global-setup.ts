import * as path from 'node:path';

/**
 * The jest `globalSetup` of every project whose tests use PostgreSQL: picks the server (TEST_DATABASE_URL,
 * else testcontainers, else an embedded PostgreSQL; libs/testing) and migrates one template database with
 * the infrastructure's migrations. It composes the two libraries here, outside both, because the
 * infrastructure's specs import the testing lib (so the testing lib cannot import the infrastructure).
 * Safe to declare in several projects that run in one jest process: only the first provisions.
 */
export default async function globalSetup(): Promise<void> {
  // jest loads a global setup with plain Node `require` (it only transpiles it), which knows nothing of
  // the workspace's TypeScript path aliases: they are registered while the libraries load.
  const { registerTsConfigPaths } = await import('@nx/js/internal');
  const unregister = registerTsConfigPaths(path.resolve(__dirname, '../../tsconfig.base.json'));
  try {
    const { acquireTestDatabaseServer } = await import('@petstore/testing');
    const { migrateDatabase } = await import('@petstore/infrastructure');
    await acquireTestDatabaseServer({ migrate: migrateDatabase });
  } finally {
    unregister();
  }
}
