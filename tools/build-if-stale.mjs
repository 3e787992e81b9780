// The first half of `tools/start.sh` (`npm start`): builds the API (`nx build api`) when dist/apps/api/main.js is
// missing or older than a source it is built from, then exits (0, or the build's status); the build writes to
// standard error, which leaves standard output to the service's JSON log. The second half, in tools/start.sh,
// is `exec node $(node tools/node-flags.mjs) dist/apps/api/main.js` (the flags: docs/operations.md, "Memory" and
// "Async context"): the shell
// replaces itself with the server, so the only processes are (npm →) node (→ the embedded PostgreSQL), and npm
// forwards SIGTERM/SIGINT to that node process.
//
// Hand-written rather than always running `nx build api`: Nx's cache is skipped in CI (NX_SKIP_NX_CACHE) and
// costs seconds even on a hit; a comparison of modification times costs milliseconds.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const bundle = join(root, 'dist/apps/api/main.js');
const INPUT_DIRS = ['apps/api', 'libs'];
// docs/api.md: it is in the bundle (its errors and the sections they cite, served at /docs/errors; webpack.config.js).
const INPUT_FILES = ['package.json', 'package-lock.json', 'tsconfig.base.json', 'nx.json', 'docs/api.md'];
/** Not part of the bundle: tests, their configs, lint configs, build output, embedded data. */
const IGNORED = /(^|\/)(node_modules|dist|tmp|\.data|test|coverage)(\/|$)|\.spec\.ts$|jest\.config\.|eslint\.config\./;

function newestIn(dir, newest = 0) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (IGNORED.test(path.slice(root.length + 1))) continue;
    if (entry.isDirectory()) newest = newestIn(path, newest);
    else if (entry.isFile()) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

const built = statSync(bundle, { throwIfNoEntry: false })?.mtimeMs ?? 0;
const newest = Math.max(
  ...INPUT_DIRS.map((dir) => newestIn(join(root, dir))),
  ...INPUT_FILES.map((file) => statSync(join(root, file), { throwIfNoEntry: false })?.mtimeMs ?? 0),
);
if (built > newest) process.exit(0);

console.error(built ? 'npm start: sources changed since the last build: nx build api' : 'npm start: nx build api');
// No Nx daemon: it would outlive `npm start`, a process left behind.
const env = { NX_DAEMON: 'false', ...process.env };
const nxPackage = createRequire(import.meta.url).resolve('nx/package.json');
const nx = join(dirname(nxPackage), JSON.parse(readFileSync(nxPackage, 'utf8')).bin.nx);
// Its output to standard error (fd 2 for both): standard output is the service's log alone.
const build = spawnSync(process.execPath, [nx, 'build', 'api'], { cwd: root, env, stdio: ['ignore', 2, 2] });
process.exit(build.status ?? 1);
