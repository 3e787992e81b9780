import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { EVENT_CATALOGUE, EVENT_TYPES, EventOwner } from './event-catalogue';

/*
 * Each event type is declared once: its definition in EVENT_CATALOGUE, and spelled out besides only where it is
 * recorded (`record('<type>', …)`), in a file of the slice that owns it. Everything else (the recorder's types, the
 * payloads, the OpenAPI schemas and prose, the webhook subscription's list, the fakes) follows from the catalogue, so
 * a new type is its definition plus its recorder, and the compiler points to the rest.
 */

const ROOT = join(__dirname, '../../../..');
const CATALOGUE = 'libs/domain/src/events/event-catalogue.ts';

/**
 * What is not the service's source: tests and their helpers (specs, e2e, the contract suites, the client's
 * type-level tests, the release checks of tools/compat, which drive a release from outside over HTTP) and the
 * client's types generated from docs/openapi.json (`npm run openapi:generate`).
 */
const NOT_SOURCE = [
  /\.spec\.ts$/,
  /(^|\/)test\//,
  /^libs\/application\/testing\/contracts\//,
  /^libs\/client\/type-tests\//,
  /^libs\/client\/src\/generated\//,
  /^tools\/compat\//,
];

/** Every non-test TypeScript file of the service, by its path from the repository's root, with its text. */
function sourceFiles(): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) {
        const name = relative(ROOT, path).split(sep).join('/');
        if (!NOT_SOURCE.some((pattern) => pattern.test(name))) files.set(name, readFileSync(path, 'utf8'));
      }
    }
  };
  for (const top of ['apps', 'libs', 'tools']) walk(join(ROOT, top));
  return files;
}

/** The files that spell `type` out (anywhere: code, a string, a comment), and those among them that record it. */
function spellingsOf(type: string, files: Map<string, string>): { files: string[]; recorders: string[] } {
  const spelled = [...files].filter(([, text]) => text.includes(type)).map(([name]) => name);
  const record = new RegExp(`\\.record\\(\\s*'${type.replace('.', '\\.')}'`);
  return { files: spelled, recorders: spelled.filter((name) => record.test(files.get(name) ?? '')) };
}

interface Slice {
  application: string[];
}

/** eslint.config.mjs's SLICES (the folders of each slice), read as data: the config itself is ESM. */
function slices(): Record<EventOwner, Slice> {
  const source = readFileSync(join(ROOT, 'eslint.config.mjs'), 'utf8');
  const literal = /export const SLICES = (\{[\s\S]*?\n\});/.exec(source)?.[1];
  if (!literal) throw new Error('eslint.config.mjs: no `export const SLICES = {…};`');
  const json = literal
    .replace(/\/\/.*$/gm, '')
    .replace(/'/g, '"')
    .replace(/([{,]\s*)([A-Za-z]\w*):/g, '$1"$2":')
    .replace(/,(\s*[}\]])/g, '$1');
  return JSON.parse(json) as Record<EventOwner, Slice>;
}

describe('each event type is declared once', () => {
  const files = sourceFiles();
  const owners = slices();

  it('reads the source: the catalogue, and the use cases that record events', () => {
    expect(files.has(CATALOGUE)).toBe(true);
    expect(files.has('libs/application/src/order/order-command.ts')).toBe(true);
    expect([...files.keys()].some((name) => name.endsWith('.spec.ts'))).toBe(false);
  });

  it.each(EVENT_TYPES)('%s: spelled out in its definition and its recorder alone', (type) => {
    const { files: spelled, recorders } = spellingsOf(type, files);
    expect(recorders).toHaveLength(1);
    expect(spelled.sort()).toEqual([CATALOGUE, ...recorders].sort());
  });

  it.each(EVENT_TYPES)("%s: recorded by the slice that owns it (its definition's `owner`)", (type) => {
    const [recorder] = spellingsOf(type, files).recorders;
    const [lib, src, folder] = recorder.split('/').slice(1);
    expect([lib, src]).toEqual(['application', 'src']);
    expect(owners[EVENT_CATALOGUE[type].owner].application).toContain(folder);
  });

  it('counts a type spelled out anywhere else: a map keyed by it, a comment naming it', () => {
    const type = EVENT_TYPES[0];
    const withStray = new Map(files);
    withStray.set('apps/api/src/stray.ts', `export const PAYLOADS = { '${type}': (subject) => subject };`);
    withStray.set('libs/application/src/stray.ts', `/** Records \`${type}\`. */`);
    const { files: spelled, recorders } = spellingsOf(type, withStray);
    expect(spelled).toEqual(expect.arrayContaining(['apps/api/src/stray.ts', 'libs/application/src/stray.ts']));
    expect(spelled).toHaveLength(recorders.length + 3);
  });
});
