import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = resolve(__dirname, '../../..');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const TYPE_TESTS = join(ROOT, 'libs/client/type-tests/tsconfig.json');

/**
 * The TypeScript blocks of the client's documentation (docs/api.md's "The typed client", libs/client/README.md),
 * each as a module: its imports on top, its lines in a function that has an `api` and a `petId` (the blocks that
 * show one call use them without creating them), inside a block of their own (so a block may declare its own).
 */
function documentedExamples(): { file: string; source: string }[] {
  const docs = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');
  const sections = [
    { file: 'docs/api.md', text: docs.slice(docs.indexOf('## The typed client')).split(/\n## /)[0] ?? '' },
    { file: 'libs/client/README.md', text: readFileSync(join(ROOT, 'libs/client/README.md'), 'utf8') },
    // The README's quickstart, as strict as the strictest consumer (noUncheckedIndexedAccess: `pets[0]` may be absent).
    { file: 'README.md', text: readFileSync(join(ROOT, 'README.md'), 'utf8') },
  ];
  return sections.flatMap(({ file, text }) =>
    [...text.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map(([, code = '']) => {
      const lines = code.split('\n');
      const imports = lines.filter((line) => line.startsWith('import '));
      const body = lines.filter((line) => !line.startsWith('import ')).join('\n');
      // A block that is a module of its own (it exports its functions) is taken as it is.
      if (/^export /m.test(code)) return { file, source: code };
      return {
        file,
        source:
          `${imports.join('\n')}\nimport type { PetstoreClient as DocsClient } from '@petstore/client';\n\n` +
          `export async function example(api: DocsClient, petId: number): Promise<void> {\n` +
          `  void api;\n  void petId;\n` +
          `  {\n${body}\n  }\n}\n`,
      };
    }),
  );
}

/**
 * The client's types, checked by the compiler: libs/client/type-tests holds what issue 33 asked of them (a 304 has
 * no body, list() only on lists and with their path parameters, defaults optional in requests, responses as sent,
 * misspelt fields refused, the event log's entries typed, every client error code named, the idempotency key on
 * results), each as a `@ts-expect-error` line or a declaration that compiles only if the type is right. And the
 * documentation's examples compile against the same sources.
 */
describe("the client's types", () => {
  const scratch = mkdtempSync(join(tmpdir(), 'petstore-client-types-'));
  const examples = documentedExamples();
  /** tsc's errors, one a line, of the one run over the type-level tests and the examples. */
  let errors: string[] = [];

  beforeAll(async () => {
    examples.forEach(({ file, source }, i) => {
      writeFileSync(join(scratch, `${file.replace(/[^A-Za-z0-9]+/g, '-')}-${i + 1}.ts`), source);
    });
    writeFileSync(
      join(scratch, 'tsconfig.json'),
      JSON.stringify({
        extends: TYPE_TESTS,
        compilerOptions: {
          typeRoots: [join(ROOT, 'node_modules/@types')],
          paths: { '@petstore/client': [join(ROOT, 'libs/client/src/index.ts')] },
        },
        include: [join(scratch, '*.ts'), join(ROOT, 'libs/client/type-tests/*.ts')],
      }),
    );
    // One program for both: the client's sources are checked once.
    errors = await run(process.execPath, [TSC, '-p', join(scratch, 'tsconfig.json')]).then(
      () => [],
      (error: { stdout?: string }) => (error.stdout ?? 'tsc failed').split('\n').filter(Boolean),
    );
  }, 180_000);

  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('hold the type-level tests (tsc over libs/client/type-tests, strict as the strictest consumer)', () => {
    const source = readFileSync(join(ROOT, 'libs/client/type-tests/client.types.ts'), 'utf8');
    expect(source.match(/@ts-expect-error/g)?.length).toBeGreaterThanOrEqual(6);
    // The errors of the type tests and of the client's sources (anything but the examples'), with their context.
    expect(errors.filter((line) => !line.includes(scratch.slice(1)) && !/^\s/.test(line))).toEqual([]);
  });

  it("compile the documentation's examples (docs/api.md's client section, both READMEs)", () => {
    expect(examples.filter(({ file }) => file === 'docs/api.md').length).toBeGreaterThanOrEqual(3);
    expect(examples.filter(({ file }) => file === 'README.md')).toHaveLength(1);
    expect(errors.filter((line) => line.includes(scratch.slice(1)) || /^\s/.test(line)).join('\n')).toBe('');
  });
});
