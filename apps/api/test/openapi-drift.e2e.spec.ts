import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { TestApp } from './support/test-app';

const ROOT = resolve(__dirname, '../../..');
const COMMITTED = join(ROOT, 'docs/openapi.json');
const GENERATED_TYPES = join(ROOT, 'libs/client/src/generated/schema.ts');
const REGENERATE =
  'Run `npm run openapi:generate` and commit docs/openapi.json and libs/client/src/generated/schema.ts.';

type Json = Record<string, any>;

describe('the committed OpenAPI description (docs/openapi.json) and client types', () => {
  let api: TestApp;
  let served: Json;
  const committedText = readFileSync(COMMITTED, 'utf8');
  const committed = JSON.parse(committedText) as Json;

  beforeAll(async () => {
    api = await TestApp.start();
    served = (await api.get('/openapi.json')).body;
  });
  afterAll(() => api.close());

  it('is what the started app serves, byte for byte', () => {
    const drift = `${JSON.stringify(served, null, 2)}\n` !== committedText;
    // The message first: a diff of a 300 KB document alone does not say what to do.
    if (drift) expect(`docs/openapi.json differs from GET /openapi.json. ${REGENERATE}`).toBe('');
    expect(served).toEqual(committed);
  });

  it('has the client types generated from it (openapi-typescript)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'petstore-client-types-'));
    try {
      const out = join(dir, 'schema.ts');
      // The options of `npm run client:generate` itself (package.json), so that the two cannot differ.
      const script = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts['client:generate'] as string;
      const [command, input, ...rest] = script.split('&&')[0].trim().split(/\s+/);
      expect([command, input]).toEqual(['openapi-typescript', 'docs/openapi.json']);
      const options = rest.slice(0, rest.indexOf('-o'));
      execFileSync(
        process.execPath,
        [join(ROOT, 'node_modules/openapi-typescript/bin/cli.js'), COMMITTED, ...options, '-o', out],
        { stdio: 'pipe' },
      );
      // As `npm run client:generate` does: the long description lines wrapped at 120 characters.
      execFileSync(process.execPath, [join(ROOT, 'tools/openapi/wrap-comments.mjs'), out], { stdio: 'pipe' });
      const same = readFileSync(out, 'utf8') === readFileSync(GENERATED_TYPES, 'utf8');
      expect(
        same ? '' : `libs/client/src/generated/schema.ts is not generated from docs/openapi.json. ${REGENERATE}`,
      ).toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('has an example for every request body and success response, each valid against its schema', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
    ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && Math.abs(n) < 2 ** 31 });
    ajv.addSchema({ $id: 'openapi', components: { schemas: rewriteRefs(served.components.schemas) } });
    const problems: string[] = [];
    // Callbacks too: a request the service sends (an event) has its example like any request body.
    const callbacks = Object.entries<Json>(served.paths).flatMap(([path, item]) =>
      Object.values<Json>(item).flatMap((operation) =>
        Object.entries<Json>(operation.callbacks ?? {}).flatMap(([name, callback]) =>
          Object.values<Json>(callback).map((callbackItem): [string, Json] => [
            `${path} callback ${name}`,
            callbackItem,
          ]),
        ),
      ),
    );
    expect(callbacks.length).toBeGreaterThan(0);
    for (const [path, item] of [...Object.entries<Json>(served.paths), ...callbacks]) {
      for (const [method, operation] of Object.entries<Json>(item)) {
        const media: Array<[string, Json]> = Object.entries<Json>(operation.responses)
          .filter(([status]) => status.startsWith('2'))
          .flatMap(([status, response]) =>
            Object.values<Json>(response.content ?? {}).map((m): [string, Json] => [status, m]),
          );
        const body = operation.requestBody?.content?.['application/json'];
        if (body) media.push(['request', body]);
        for (const [what, { schema, example }] of media) {
          const label = `${method.toUpperCase()} ${path} ${what}`;
          if (example === undefined) problems.push(`${label}: no example`);
          else if (!ajv.validate(rewriteRefs(schema), example)) problems.push(`${label}: ${ajv.errorsText()}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});

function rewriteRefs<T>(node: T): T {
  if (Array.isArray(node)) return node.map(rewriteRefs) as T;
  if (node && typeof node === 'object') {
    return Object.fromEntries(
      Object.entries(node).map(([k, v]) => [
        k,
        k === '$ref' && typeof v === 'string' ? v.replace(/^#\//, 'openapi#/') : rewriteRefs(v),
      ]),
    ) as T;
  }
  return node;
}
