import * as path from 'node:path';

/**
 * The jest `globalTeardown` paired with `global-setup.ts`: the last one in the process drops the
 * databases the run created on a shared server and stops the container or embedded server.
 */
export default async function globalTeardown(): Promise<void> {
  const { registerTsConfigPaths } = await import('@nx/js/internal');
  const unregister = registerTsConfigPaths(path.resolve(__dirname, '../../tsconfig.base.json'));
  try {
    const { releaseTestDatabaseServer } = await import('@petstore/testing');
    await releaseTestDatabaseServer();
  } finally {
    unregister();
  }
}
