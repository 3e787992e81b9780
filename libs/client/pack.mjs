// `npm run client:pack [destination]`: @petstore/client as a tarball, without the server. Builds libs/client with
// build.mjs (two tsc runs, no nx, no server build) and packs dist/libs/client with `npm pack` into `destination`
// (default dist/), then prints the tarball's path, last. The build needs only TypeScript and the client's own
// dependencies (their types); in a checkout without `npm install`, those alone are installed into
// libs/client/node_modules (its package.json's dependencies, plus the workspace's TypeScript), not the server's.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const lib = dirname(fileURLToPath(import.meta.url));
const root = resolve(lib, '../..');
const destination = resolve(process.argv[2] ?? join(root, 'dist'));
// Where build.mjs writes the package (CLIENT_BUILD_DIR, as build.mjs reads it).
const built = resolve(process.env['CLIENT_BUILD_DIR'] ?? join(root, 'dist/libs/client'));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

const client = JSON.parse(readFileSync(join(lib, 'package.json'), 'utf8'));
const workspace = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const needed = ['typescript', ...Object.keys(client.dependencies ?? {})];
const installed = (name) => [lib, root].some((dir) => existsSync(join(dir, 'node_modules', name, 'package.json')));
const missing = needed.filter((name) => !installed(name));
if (missing.length) {
  const typescript = `typescript@${workspace.devDependencies.typescript}`;
  console.log(`Installing the client's build dependencies only (${missing.join(', ')} missing) into libs/client`);
  execFileSync(
    npm,
    [
      'install',
      '--prefix',
      lib,
      '--no-save',
      '--no-package-lock',
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      typescript,
    ],
    { stdio: 'inherit' },
  );
}

execFileSync(process.execPath, [join(lib, 'build.mjs')], { stdio: 'inherit' });
mkdirSync(destination, { recursive: true });
const packed = execFileSync(npm, ['pack', built, '--pack-destination', destination, '--json', '--silent'], {
  cwd: root,
  encoding: 'utf8',
});
const [{ filename, version }] = JSON.parse(packed);
const tarball = join(destination, filename.replace(/^@petstore\//, 'petstore-'));
// The version build.mjs wrote: the service's (root package.json), not one kept in libs/client.
console.log(`Packed @petstore/client ${version} (dependencies: ${Object.keys(client.dependencies).join(', ')})`);
console.log(tarball);
