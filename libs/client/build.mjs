// Builds the publishable @petstore/client into dist/libs/client (`nx build client`): the sources compiled twice by
// the workspace's TypeScript, as ES modules (esm/, `import`) and as CommonJS (cjs/, `require`), each with its
// declarations, beside the package.json and README. Two tsc runs rather than a bundler: the package is a few files
// with two dependencies (openapi-fetch and standardwebhooks, left external), tsc already type-checks them, and its
// declarations are exact for both formats (the two runs go at once); each folder gets a package.json with its
// `type`, so Node and TypeScript read each as it is. `npm run client:pack` (libs/client/pack.mjs) builds and packs
// it in one command.
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const lib = dirname(fileURLToPath(import.meta.url));
const root = resolve(lib, '../..');
// CLIENT_BUILD_DIR: another place (a test's, so that it does not race another test building the same folder).
const out = resolve(process.env['CLIENT_BUILD_DIR'] ?? join(root, 'dist/libs/client'));
// The workspace's TypeScript, or the one `npm run client:pack` installed beside the client (a checkout without the
// server's dependencies).
const tsc = [lib, root].map((dir) => join(dir, 'node_modules/typescript/bin/tsc')).find((path) => existsSync(path));
if (!tsc) throw new Error('TypeScript is not installed: run `npm run client:pack` (or `npm install`).');

rmSync(out, { recursive: true, force: true });
const formats = [
  ['esm', 'module', ['--module', 'esnext', '--moduleResolution', 'bundler']],
  ['cjs', 'commonjs', ['--module', 'nodenext', '--moduleResolution', 'nodenext']],
];
// The two compilations at once (each is one process, one core): the build takes about as long as one of them.
await Promise.all(
  formats.map(async ([dir, type, options]) => {
    await new Promise((resolve, reject) => {
      execFile(
        process.execPath,
        [tsc, '-p', join(lib, 'tsconfig.build.json'), '--outDir', join(out, dir), ...options],
        (error, stdout, stderr) => {
          process.stdout.write(stdout);
          process.stderr.write(stderr);
          if (error) reject(new Error(`tsc (${dir}) failed: ${stdout}${stderr}`));
          else resolve();
        },
      );
    });
    writeFileSync(join(out, dir, 'package.json'), `${JSON.stringify({ type }, null, 2)}\n`);
  }),
);
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'package.json'), `${JSON.stringify(manifest(), null, 2)}\n`);
copyFileSync(join(lib, 'README.md'), join(out, 'README.md'));
copyFileSync(join(lib, 'CHANGELOG.md'), join(out, 'CHANGELOG.md'));
console.log(`Built ${out} (esm, cjs)`);

/**
 * The built package.json: libs/client's, with the service's version (root package.json's, read now: the client is
 * released with the service it was generated from, so its version is never hand-kept apart), without `private` and
 * the comment (they are the source folder's), and with a `publishConfig.registry` that is never the public one: an
 * `npm publish` of the folder goes to CLIENT_REGISTRY (your private registry, given when you pack to publish), else to
 * https://npm.invalid/, which does not resolve (RFC 2606), so the name is not published anywhere by accident.
 */
function manifest() {
  const client = JSON.parse(readFileSync(join(lib, 'package.json'), 'utf8'));
  delete client['//'];
  delete client.private;
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const registry = process.env['CLIENT_REGISTRY'] || 'https://npm.invalid/';
  const [name, ...rest] = Object.entries(client);
  return Object.fromEntries([name, ['version', version], ...rest, ['publishConfig', { registry }]]);
}
