import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { WIRING, generatedFiles } from './generator';

/**
 * The generator as a developer uses it: `nx g @petstore/tools:resource shelter` in a copy of this workspace
 * (node_modules linked, not copied), then what CI asks of any change there: type-check, lint of the touched
 * projects, the layer boundary check, and the generated tests themselves (the HTTP one on a real
 * PostgreSQL: the server of this run, so that a run starts one embedded PostgreSQL, not two).
 */

const WORKSPACE = path.resolve(__dirname, '../../../../..');
/**
 * Not copied, wherever they are: installed packages (linked instead), build and test outputs, local data,
 * Git, Nx and editor state.
 */
const NOT_COPIED = new Set(['node_modules', 'dist', 'out-tsc', '.data', 'tmp', '.git', '.nx', 'coverage', '.claude']);
const MINUTE = 60_000;
/** Where the jest global setup publishes the run's server (libs/testing, TEST_DATABASE_ENV.serverUrl). */
const RUN_SERVER_URL = 'PETSTORE_TEST_SERVER_URL';
const NAME = 'shelter';
const TIMESTAMP = Date.now();
const FILES = generatedFiles(NAME, TIMESTAMP);

/** A package's command, as a path from the workspace (through the node_modules link), e.g. `bin('nx')`. */
function bin(pkg: string, command = pkg): string {
  const manifest = require(`${pkg}/package.json`) as { bin: string | Record<string, string> };
  const file = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin[command];
  return path.join('node_modules', pkg, file);
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let workspace: string;

/**
 * The environment of the commands: this one, without what belongs to the jest run or Nx run around it, and with the
 * PostgreSQL server of this run (the jest global setup of this project, libs/testing) as TEST_DATABASE_URL: the
 * generated HTTP test migrates a template of its own there and drops only what it created, instead of starting an
 * embedded PostgreSQL of its own (initdb, start and stop: seconds of CPU on a machine the other tests share).
 */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(NX_|PETSTORE_TEST_|JEST_)/.test(key) || key === 'NODE_ENV') continue;
    env[key] = value;
  }
  const server = process.env['TEST_DATABASE_URL'] ?? process.env[RUN_SERVER_URL];
  return {
    ...env,
    ...(server ? { TEST_DATABASE_URL: server } : {}),
    // Nx's graph plugins in the command's own process, not one process each: nx g took 12 s of CPU, 4.5 s so.
    NX_ISOLATE_PLUGINS: 'false',
    NX_DAEMON: 'false',
    NX_NO_CLOUD: 'true',
    FORCE_COLOR: '0',
  };
}

function run(args: string[], timeout: number): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      { cwd: workspace, env: childEnv(), timeout, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Fails with the command's output when it exits non-zero. */
async function succeeds(args: string[], timeout: number): Promise<Run> {
  const result = await run(args, timeout);
  if (result.code !== 0) {
    const tail = (text: string) => text.split('\n').slice(-80).join('\n');
    throw new Error(`node ${args.join(' ')} exited ${result.code}\n${tail(result.stdout)}\n${tail(result.stderr)}`);
  }
  return result;
}

const read = (file: string) => fs.readFile(path.join(workspace, file), 'utf-8');

describe('nx g @petstore/tools:resource, in a copy of the workspace', () => {
  beforeAll(async () => {
    workspace = await fs.mkdtemp(path.join(tmpdir(), 'petstore-generator-'));
    await fs.cp(WORKSPACE, workspace, {
      recursive: true,
      filter: (source) =>
        !path
          .relative(WORKSPACE, source)
          .split(path.sep)
          .some((part) => NOT_COPIED.has(part)),
    });
    await fs.symlink(path.join(WORKSPACE, 'node_modules'), path.join(workspace, 'node_modules'), 'dir');
    await succeeds(
      [bin('nx'), 'g', '@petstore/tools:resource', NAME, `--timestamp=${TIMESTAMP}`, '--no-interactive'],
      2 * MINUTE,
    );
  }, 3 * MINUTE);

  afterAll(async () => {
    if (!workspace) return;
    await fs.unlink(path.join(workspace, 'node_modules')).catch(() => undefined); // the link, never its target
    await fs.rm(workspace, { recursive: true, force: true });
  });

  it('writes every layer and wires the resource into the shared lists', async () => {
    for (const file of FILES) await expect(fs.access(path.join(workspace, file))).resolves.toBeUndefined();
    expect(await read('libs/domain/src/index.ts')).toContain(`export * from './shelter';`);
    expect(await read('libs/application/src/index.ts')).toContain(`export * from './shelter';`);
    // The fake and the contract suite, for the tests of other projects too (`@petstore/application/testing`).
    const testing = await read('libs/application/testing/index.ts');
    expect(testing).toContain(`export * from './in-memory/in-memory-shelter.repository';`);
    expect(testing).toContain(`export * from './contracts/shelter-repository.contract';`);
    expect(await read('libs/infrastructure/src/index.ts')).toContain(
      `export * from './persistence/shelter/pg-shelter.repository';`,
    );
    expect(await read('libs/infrastructure/src/database/migrations/index.ts')).toMatch(
      new RegExp(`MIGRATIONS = \\[[^\\]]*\\bShelters${TIMESTAMP}\\b`),
    );
    // An expand step, served by the release before (.ci/previous-release): docs/development.md.
    const previous = (await read('.ci/previous-release')).trim().split(/\s+/)[1];
    expect(await read(`libs/infrastructure/src/database/migrations/${TIMESTAMP}-shelters.ts`)).toContain(
      `readonly servesFrom = '${previous}';`,
    );
    expect(await read('apps/api/src/assembly/assembly.ts')).toMatch(/HTTP_SLICES = \[[^\]]*\bSheltersModule\b/);
    // The one persistence style (docs/architecture.md): named statements with their columns, SequenceBlocks ids.
    const repository = await read('libs/infrastructure/src/persistence/shelter/pg-shelter.repository.ts');
    expect(repository).toContain("private readonly ids = new SequenceBlocks('shelters');");
    expect(repository).not.toMatch(/SELECT \*|nextSequenceId/);
    expect(repository).not.toMatch(/this\.host\.(query|execute)[^(]*\(`/);
    expect(await read('apps/api/src/common/errors/error-codes.ts')).toMatch(
      /ERROR_CODES = \{[^}]*\bshelter_name_taken: \[409\],?\n\};/,
    );
  });

  it(
    'refuses to generate the same resource twice, changing nothing',
    async () => {
      const before = await read('apps/api/src/assembly/assembly.ts');
      const again = await run([bin('nx'), 'g', '@petstore/tools:resource', NAME, '--no-interactive'], 2 * MINUTE);
      expect(again.code).not.toBe(0);
      expect(again.stdout + again.stderr).toContain('exists already');
      expect(await read('apps/api/src/assembly/assembly.ts')).toBe(before);
    },
    3 * MINUTE,
  );

  // The app's test config reaches the whole app and every lib through the HTTP tests; the libs' test configs check
  // the libs under their own options (those of their lib configs, with jest's types) with the fake, the contract suite
  // and their specs, which no HTTP test reaches. ts-jest only transpiles the tests it runs.
  it(
    'type-checks (the app, its HTTP tests and every lib it imports; the libs and their tests under their own options)',
    async () => {
      const configs = [
        'apps/api/tsconfig.spec.json',
        'libs/application/tsconfig.spec.json',
        'libs/infrastructure/tsconfig.spec.json',
      ];
      for (const config of configs) {
        await succeeds([bin('typescript', 'tsc'), '--noEmit', '-p', config], 5 * MINUTE);
      }
    },
    10 * MINUTE,
  );

  // What the generator wrote or changed, not the whole of the four projects: every other file is the workspace's own,
  // linted by CI as it is (the four projects took 11 s in a full run, these files 1.3 s alone).
  it(
    'lints every file it wrote or wired without an error, and the generated files without a warning',
    async () => {
      const touched = [...FILES, ...Object.values(WIRING)];
      const { stdout } = await run([bin('eslint'), '--format', 'json', ...touched], 5 * MINUTE);
      const results = JSON.parse(stdout) as { filePath: string; messages: { severity: number; message: string }[] }[];
      const problems = results.flatMap((r) =>
        r.messages.map((m) => ({
          file: path.relative(workspace, r.filePath),
          severity: m.severity,
          message: m.message,
        })),
      );
      expect(problems.filter((p) => p.severity === 2)).toEqual([]);
      expect(problems.filter((p) => FILES.includes(p.file))).toEqual([]);
      expect(results.map((r) => path.relative(workspace, r.filePath)).sort()).toEqual([...new Set(touched)].sort());
    },
    6 * MINUTE,
  );

  it(
    'keeps the layer boundaries (tools/check-boundaries.mjs)',
    async () => {
      await succeeds(['tools/check-boundaries.mjs'], 3 * MINUTE);
    },
    4 * MINUTE,
  );

  it(
    'passes its own tests: the entity, the use cases on the fake, the contract on the fake and on PostgreSQL, HTTP',
    async () => {
      const report = path.join(workspace, 'jest-report.json');
      const specs = FILES.filter((file) => file.endsWith('.spec.ts'));
      // In band: for a few small files (the unit tests take a second), two worker processes cost more than they save.
      const args = [bin('jest'), '--ci', '--runInBand', '--json', `--outputFile=${report}`, ...specs];
      const ran = await succeeds(args, 8 * MINUTE);
      // On this run's PostgreSQL server (childEnv), not on one more embedded PostgreSQL.
      expect(ran.stdout + ran.stderr).toContain('[test database] using TEST_DATABASE_URL');
      const result = JSON.parse(await fs.readFile(report, 'utf-8')) as {
        numFailedTests: number;
        numPassedTests: number;
        testResults: { name: string; status: string }[];
      };
      expect(result.numFailedTests).toBe(0);
      expect(result.numPassedTests).toBeGreaterThan(10);
      expect(result.testResults.map((r) => [path.relative(workspace, r.name), r.status]).sort()).toEqual(
        specs.map((spec) => [spec, 'passed']).sort(),
      );
    },
    10 * MINUTE,
  );
});
