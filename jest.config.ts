/**
 * Jest reads its TypeScript config files with ts-node, which by default type-checks them (a whole program, @nx/jest's
 * declarations included: 5 to 10 s before the first test on a busy machine). Transpiling is enough here: the types
 * of these files are checked by `npm run typecheck` (this one through tools/jest/tsconfig.json). The option of the
 * first config read holds for the others. They replace Jest's own compiler options (its `moduleTypes` keep the
 * output CommonJS): the resolution is named, one TypeScript 6 accepts (node10, its default for CommonJS, is
 * deprecated: error TS5107).
 * On Node 22 (type stripping) Jest needs no loader at all; CI's suite runs on the machines' Node 20, through ts-node.
 * @jest-config-loader-options {"transpileOnly":true,"compilerOptions":{"moduleResolution":"bundler"}}
 */
import type { Config } from 'jest';
import { getJestProjectsAsync } from '@nx/jest';

/**
 * The jest projects, from Nx's project graph. Nx runs each graph plugin (webpack, eslint, jest, js) in a process of
 * its own unless NX_ISOLATE_PLUGINS=false: here that cost 4 to 6 s of CPU before the first test, for the same graph.
 * Set only while the graph is made (a value set by the caller holds), so the tests' own processes are not affected.
 */
async function jestProjects(): Promise<Awaited<ReturnType<typeof getJestProjectsAsync>>> {
  const isolate = process.env['NX_ISOLATE_PLUGINS'];
  process.env['NX_ISOLATE_PLUGINS'] = isolate ?? 'false';
  try {
    return await getJestProjectsAsync();
  } finally {
    if (isolate === undefined) delete process.env['NX_ISOLATE_PLUGINS'];
  }
}

export default async (): Promise<Config> => ({
  projects: await jestProjects(),
  // Run as several projects, jest takes the test timeout from here, not from each project's config:
  // tests that start a PostgreSQL or a built process need more than the 5 s default on a busy machine.
  testTimeout: 30_000,
  // Two workers even on two cores (jest's default there is one, in band): most of a test's time is spent waiting on
  // PostgreSQL, a spawned process or a timer, so a second file runs in that time. Each worker has its own database.
  maxWorkers: 2,
});
