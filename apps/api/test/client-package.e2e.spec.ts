import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { resetDatabase, testDatabaseUrl } from '@petstore/testing';
import { ApiProcess, BUILT_MAIN, ensureBuilt } from './support/built-app';

const run = promisify(execFile);
jest.setTimeout(240_000);

const ROOT = resolve(__dirname, '../../..');
const CLIENT = join(ROOT, 'dist/libs/client');
/** The TypeScript the consumers compile with: 6, as the workspace (openapi-typescript's output needs it, not 7). */
const TYPESCRIPT = 'typescript@~6.0.3';
const TYPES_NODE = '@types/node@^22';

/** The README's quickstart block (its lines as they are there, import included). */
function readmeQuickstart(): { imports: string; body: string } {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const match = /```ts\n(import \{[^\n]*\} from '@petstore\/client';)\n\n([\s\S]*?)```/.exec(readme);
  if (!match) throw new Error('README.md has no TypeScript quickstart block importing @petstore/client');
  return { imports: match[1], body: match[2] };
}

/** What each consumer prints after the quickstart, and a typed error it catches (both formats' PetstoreApiError). */
const REPORT = `
const failure = await createPetstoreClient({ baseUrl, apiKey: 'psk_wrong' }).GET('/accounts/me').catch((e) => e);
const code: ErrorCode | undefined = failure instanceof PetstoreApiError ? failure.code : undefined;
console.log(JSON.stringify({ key: signUp.apiKey.key, pets: pets.map((pet) => pet.id), order, message, code }));
`;
const REPORT_IMPORTS = "import { PetstoreApiError, type ErrorCode } from '@petstore/client';";

/** The typed codes, as a consumer sees them: the per-operation union and the open ErrorCode. */
const CODES = `import type { ErrorCode, KnownErrorCode, OperationErrorCode } from '@petstore/client';

export const placing: OperationErrorCode<'/store/orders', 'post'>[] = ['insufficient_stock', 'unknown_pet'];
// @ts-expect-error placing an order never answers too_many_keys
export const notPlacing: OperationErrorCode<'/store/orders', 'post'> = 'too_many_keys';
export const newer: ErrorCode = 'a_code_added_later';
// @ts-expect-error KnownErrorCode is the documented list only
export const unknown: KnownErrorCode = 'a_code_added_later';
`;

const TSCONFIG = {
  compilerOptions: {
    strict: true,
    target: 'es2022',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    types: ['node'],
    outDir: 'dist',
    rootDir: 'src',
    skipLibCheck: false,
  },
  include: ['src'],
};

/**
 * Installs the packed tarball: from the registry for typescript and @types/node, with --prefer-offline (npm's cache
 * first). Without a registry, the tarball is unpacked by hand and the workspace's own packages are linked in.
 */
async function install(project: string, tarball: string): Promise<string> {
  try {
    await run(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball, TYPESCRIPT, TYPES_NODE],
      { cwd: project, timeout: 120_000 },
    );
    return 'npm install';
  } catch (error) {
    const modules = join(project, 'node_modules');
    rmSync(modules, { recursive: true, force: true });
    mkdirSync(join(modules, '@petstore/client'), { recursive: true });
    mkdirSync(join(modules, '@types'), { recursive: true });
    await run('tar', ['-xzf', tarball, '-C', join(modules, '@petstore/client'), '--strip-components=1']);
    for (const name of ['typescript', 'openapi-fetch', 'openapi-typescript-helpers', '@types/node', 'undici-types'])
      symlinkSync(join(ROOT, 'node_modules', name), join(modules, name), 'dir');
    return `the workspace's packages (npm install failed: ${(error as Error).message.split('\n')[0]})`;
  }
}

/**
 * A project outside the workspace, as a third party would have: the client installed from the tarball `npm pack`
 * made, TypeScript strict with NodeNext resolution, in an ES module project and in a CommonJS one. Each type-checks
 * the README's quickstart (no `!` but the Order id the specification leaves optional) and the typed error codes
 * (per operation, and open to codes added later), and runs the quickstart against the built
 * service on the seeded demo catalogue, one after the other: the second run finds the pet the first one ordered
 * available again.
 */
describe('@petstore/client as a package, in a project outside the workspace', () => {
  let server: ApiProcess | undefined;
  let scratch: string;

  beforeAll(async () => {
    ensureBuilt();
    await run(process.execPath, [join(ROOT, 'libs/client/build.mjs')], { cwd: ROOT });
    scratch = mkdtempSync(join(tmpdir(), 'petstore-client-'));
  });

  afterAll(async () => {
    if (server) expect(await server.stop()).toBe(0);
    rmSync(scratch, { recursive: true, force: true });
  });

  it('packs, installs, type-checks (ESM and CommonJS) and runs the quickstart on the seeded data', async () => {
    const packed = await run('npm', ['pack', CLIENT, '--pack-destination', scratch, '--json'], { cwd: ROOT });
    const [{ filename, files }] = JSON.parse(packed.stdout) as Array<{ filename: string; files: { path: string }[] }>;
    expect(files.map((f) => f.path)).toEqual(
      expect.arrayContaining(['package.json', 'esm/index.js', 'esm/index.d.ts', 'cjs/index.js', 'cjs/index.d.ts']),
    );
    expect(files.some((f) => f.path.endsWith('.ts') && !f.path.endsWith('.d.ts'))).toBe(false);
    const tarball = join(scratch, filename.replace(/^@petstore\//, 'petstore-'));
    expect(readdirSync(scratch)).toContain(filename.replace(/^@petstore\//, 'petstore-'));

    writeFileSync(join(scratch, 'package.json'), JSON.stringify({ name: 'consumer', private: true }, null, 2));
    const installedWith = await install(scratch, tarball);
    const installed = JSON.parse(readFileSync(join(scratch, 'node_modules/@petstore/client/package.json'), 'utf8'));
    expect(installed).toMatchObject({
      name: '@petstore/client',
      dependencies: { 'openapi-fetch': expect.any(String) },
    });

    const { imports, body } = readmeQuickstart();
    const formats = {
      esm: `${imports}\n${REPORT_IMPORTS}\n\n${body}${REPORT}`,
      // No top-level await in CommonJS: the same lines inside a function.
      cjs: `${imports}\n${REPORT_IMPORTS}\n\nasync function main() {\n${body}${REPORT}}\n\nvoid main();\n`,
    };
    for (const [format, source] of Object.entries(formats)) {
      const project = join(scratch, format);
      mkdirSync(join(project, 'src'), { recursive: true });
      const type = format === 'esm' ? 'module' : 'commonjs';
      writeFileSync(join(project, 'package.json'), JSON.stringify({ name: `consumer-${format}`, private: true, type }));
      writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
      writeFileSync(join(project, 'src/quickstart.ts'), source);
      writeFileSync(join(project, 'src/codes.ts'), CODES);
      const tsc = join(scratch, 'node_modules/typescript/bin/tsc');
      const version = (await run(process.execPath, [tsc, '--version'])).stdout;
      expect(version).toMatch(/^Version 6\./);
      await run(process.execPath, [tsc, '-p', project]).catch((error: { stdout?: string }) => {
        throw new Error(`${format}: the quickstart does not type-check (${installedWith}):\n${error.stdout}`);
      });
    }

    const databaseUrl = await testDatabaseUrl();
    await resetDatabase(databaseUrl);
    await run(process.execPath, [BUILT_MAIN, '--seed'], {
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    });
    server = await ApiProcess.start({ DATABASE_URL: databaseUrl, MESSAGE_WORKER: 'true', LOG_LEVEL: 'warn' });
    const reports = [];
    for (const format of Object.keys(formats)) {
      const { stdout } = await run(process.execPath, [join(scratch, format, 'dist/quickstart.js')], {
        env: { ...process.env, PETSTORE_URL: server.baseUrl },
        timeout: 60_000,
      });
      reports.push(JSON.parse(stdout.trim().split('\n').pop() ?? ''));
    }
    for (const report of reports) {
      expect(report).toMatchObject({
        key: expect.stringMatching(/^psk_/),
        order: { petId: report.pets[0], quantity: 1, complete: false },
        message: { message: 'Hello, Petstore!', status: 'delivered' },
        code: 'unauthorized',
      });
      expect(report.pets.length).toBeGreaterThan(2); // more than one page of two: the iterator followed Link
    }
    // Re-runnable: the first run cancelled its order, so the second finds the same pet first and orders it again.
    expect(reports[1].pets).toEqual(reports[0].pets);
  });
});
