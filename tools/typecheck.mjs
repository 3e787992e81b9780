// Type-checks every project with its own tsconfig (app/lib code and specs), in one pass each.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const configs = ['apps', 'libs']
  .flatMap((dir) => readdirSync(dir).map((project) => join(dir, project)))
  .flatMap((project) => ['tsconfig.app.json', 'tsconfig.lib.json', 'tsconfig.spec.json'].map((f) => join(project, f)))
  .concat('tools/jest/tsconfig.json') // the jest global setup and teardown
  .concat('tools/plugin/tsconfig.lib.json', 'tools/plugin/tsconfig.spec.json') // the workspace's generators
  .concat('tools/openapi/tsconfig.json') // the OpenAPI generator
  .concat('tools/docs/tsconfig.json') // the docs' generated sections
  .concat('tools/compat/tsconfig.json') // the previous-release and restore checks
  .concat('libs/client/type-tests/tsconfig.json') // the client's type-level tests (issue 33)
  .filter((config) => existsSync(config));

let failed = false;
for (const config of configs) {
  try {
    execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '--noEmit', '-p', config], { stdio: 'inherit' });
    console.log(`typecheck ok: ${config}`);
  } catch {
    failed = true;
    console.error(`typecheck FAILED: ${config}`);
  }
}
process.exit(failed ? 1 : 0);
