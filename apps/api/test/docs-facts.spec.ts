import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LIMITS } from '@petstore/domain';
import { DEFAULT_POOL_LIMITS } from '@petstore/infrastructure';
import { allSettings } from '../src/config/app-config';

/**
 * Facts of README.md and docs/*.md that would drift from the code unseen (issue 51: six of ten checked had): the lists
 * of aggregates, projects, folders, slices and roles, who reads the environment, the defaults and limits quoted in
 * prose, the names of settings, metrics, tables and constants, the event types, the runs cited. Each is compared
 * with what it describes; when one fails, correct the doc (or the code), not this. Counts nobody needs are left out
 * of the docs rather than held here. The generated sections are docs-generated.spec.ts's; the error codes and the
 * global modules have their own specs (error-codes.spec.ts, global-modules.spec.ts).
 */
const ROOT = join(__dirname, '../../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const text = Object.fromEntries(DOCS.map((doc) => [doc, read(doc)])) as Record<string, string>;
const history = gitHistory();
const words = (s: string) => s.replace(/[│▼]/g, ' ').replace(/\s+/g, ' ');

/** The paragraph (or list item) of `doc` whose first line starts with `start`, up to a blank line or the next item. */
function paragraph(doc: string, start: string): string {
  const lines = text[doc]?.split('\n') ?? [];
  const from = lines.findIndex((line) => line.startsWith(start));
  if (from === -1) throw new Error(`${doc}: no paragraph starting "${start}"`);
  const to = lines.findIndex((line, i) => i > from && (line.trim() === '' || line.startsWith('- ')));
  return lines.slice(from, to === -1 ? undefined : to).join('\n');
}

/** The part of `doc` under the heading `heading`, up to the next heading of its level or above. */
function sectionUnder(doc: string, heading: string): string {
  const source = text[doc] ?? '';
  const from = source.indexOf(`\n${heading}\n`);
  if (from === -1) throw new Error(`${doc}: no heading "${heading}"`);
  const level = heading.split(' ')[0] as string;
  const rest = source.slice(from + heading.length + 2);
  const next = rest.search(new RegExp(`^#{1,${level.length}} `, 'm'));
  return next === -1 ? rest : rest.slice(0, next);
}

const folders = (path: string) =>
  readdirSync(join(ROOT, path), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
/** Files under `dir` (its path from the root), not in node_modules, dist or generated. */
function filesUnder(dir: string): string[] {
  if (!existsSync(join(ROOT, dir))) return [];
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return ['node_modules', 'dist', '.nx', 'tmp'].includes(entry.name) ? [] : filesUnder(path);
    return [path];
  });
}

describe('the docs name what the code has', () => {
  it('lists the aggregates of libs/domain wherever it lists them (classes with a `restore` factory)', () => {
    const aggregates = filesUnder('libs/domain/src')
      .filter((path) => path.endsWith('.ts') && !path.endsWith('.spec.ts'))
      .flatMap((path) =>
        read(path)
          .split(/^export class /m)
          .slice(1),
      )
      .filter((declaration) => declaration.includes('static restore('))
      .map((declaration) => /^\w+/.exec(declaration)?.[0]);
    expect(aggregates).toEqual(expect.arrayContaining(['Pet', 'Order', 'WebhookEndpoint']));
    const lists = DOCS.flatMap((doc) =>
      [...words(text[doc] ?? '').matchAll(/aggregates \(([^)…]+)\)/g)].map((match) => ({
        doc,
        names: (match[1] as string).split(/, | and /).sort(),
      })),
    );
    expect(lists.map(({ doc }) => doc)).toEqual(expect.arrayContaining(['README.md', 'docs/architecture.md']));
    for (const list of lists) expect(list).toEqual({ doc: list.doc, names: [...new Set(aggregates)].sort() });
  });

  it('names every Nx project in README.md and describes each in docs/architecture.md, "Layers"', () => {
    const projects = ['apps', 'libs', 'tools']
      .flatMap((dir) => folders(dir).map((name) => `${dir}/${name}`))
      .filter((root) => existsSync(join(ROOT, root, 'project.json')));
    expect(projects).toEqual(expect.arrayContaining(['apps/api', 'libs/domain', 'tools/plugin']));
    const screen = sectionUnder('README.md', '## Architecture in one screen');
    expect(projects.filter((root) => !screen.includes(root))).toEqual([]);
    const bullets = [...sectionUnder('docs/architecture.md', '## Layers').matchAll(/^- `([\w/-]+)`:/gm)].map(
      (m) => m[1],
    );
    expect(bullets.sort()).toEqual(projects.sort());
  });

  it('draws the top-level folders of apps/api/src and names those of common/ ("Inside apps/api")', () => {
    const inside = sectionUnder('docs/architecture.md', '## Inside apps/api');
    const block = /```\n([\s\S]*?)```/.exec(inside)?.[1] ?? '';
    const drawn = new Set([...block.matchAll(/(?:^|, )([a-z][a-z-]*)\/(?=[,\s])/gm)].map((m) => m[1]));
    const withCode = folders('apps/api/src').filter((name) =>
      filesUnder(`apps/api/src/${name}`).some((path) => path.endsWith('.ts')),
    );
    expect([...drawn].sort()).toEqual(withCode.sort());
    const common = paragraph('docs/architecture.md', '`common/` holds one folder per concern');
    const named = new Set([...common.matchAll(/`([a-z-]+)\/`/g)].map((m) => m[1]));
    expect(folders('apps/api/src/common').filter((name) => !named.has(name))).toEqual([]);
    expect(
      [...named].filter((name) => !existsSync(join(ROOT, 'apps/api/src/common', name)) && !drawn.has(name)),
    ).toEqual([]);
  });

  it("names libs/application/src's folders in their floors (docs/architecture.md)", () => {
    const floors = paragraph('docs/architecture.md', 'Inside `libs/application/src` the folders stand in floors');
    const named = [...floors.matchAll(/`([a-z-]+)\/`/g)].map((m) => m[1]).sort();
    expect(named).toEqual(folders('libs/application/src').sort());
  });

  it("draws the slices' allowed directions and folders as eslint.config.mjs declares them (SLICES)", () => {
    const slices = declaredSlices();
    const directions = sectionUnder('docs/architecture.md', '## Slices and their directions');
    const graph = /```mermaid\n([\s\S]*?)```/.exec(directions)?.[1] ?? '';
    const drawn = [...graph.matchAll(/^\s*(\w+) -\.?->? (\w+)$/gm)]
      .filter((m) => m[1] !== 'assembly' && !(m[1] as string).startsWith('assembly'))
      .map((m) => `${m[1]} -> ${m[2]}`);
    const declared = Object.entries(slices).flatMap(([from, slice]) => slice.uses.map((to) => `${from} -> ${to}`));
    expect(drawn.sort()).toEqual(declared.sort());
    const sentence = words(paragraph('docs/architecture.md', 'Each slice is one folder per layer'));
    for (const [name, slice] of Object.entries(slices)) {
      const match = new RegExp(`${name}: ((?:\`[\\w-]+\`(?:, | / )?)+)`).exec(sentence);
      const [application = '', api] = (match?.[1] ?? '').split(' / ');
      const listed = (part: string) => [...part.matchAll(/`([\w-]+)`/g)].map((m) => m[1]);
      expect({ name, application: listed(application), api: listed(api ?? application) }).toEqual({
        name,
        application: slice.application,
        api: slice.api,
      });
      expect({ name, persistence: slice.persistence }).toEqual({ name, persistence: slice.application });
    }
    const readme = words(sectionUnder('README.md', '## Architecture in one screen'));
    expect(/the slices ([\w, ]+) \(/.exec(readme)?.[1]?.split(', ')).toEqual(Object.keys(slices));
  });

  it("lists a process's roles as roles.ts declares them", () => {
    const union = /export type Role = ([^;]+);/.exec(read('apps/api/src/assembly/roles.ts'))?.[1] ?? '';
    const roles = [...union.matchAll(/'(\w+)'/g)].map((m) => m[1]).join(', ');
    expect(/\((http, [\w, ]+)\)/.exec(words(text['README.md'] ?? ''))?.[1]).toBe(roles);
    const architecture = words(text['docs/architecture.md'] ?? '');
    expect(/into roles — ([`\w, ]+) —/.exec(architecture)?.[1]?.replace(/`/g, '')).toBe(roles);
  });

  it('names the command-line modes main.js has (docs/architecture.md, "Processes")', () => {
    const flags = (source: string) => [...new Set([...source.matchAll(/--[a-z]+-only|--seed/g)].map((m) => m[0]))];
    const modes = paragraph('docs/architecture.md', 'One build (`dist/apps/api/main.js`) runs in');
    expect(flags(modes).sort()).toEqual(flags(read('apps/api/src/assembly/roles.ts')).sort());
    expect(flags(modes).length).toBeGreaterThan(2);
  });

  it('says how many connections a pool holds as data-source.ts does (DEFAULT_POOL_LIMITS)', () => {
    const said = ['docs/operations.md', 'docs/runbook.md'].flatMap((doc) =>
      [...words(text[doc] ?? '').matchAll(/(?:pool's |at most |pool \(|own |up to |than )(\d+) connections\b/g)].map(
        (m) => ({ doc, said: m[0], connections: Number(m[1]) }),
      ),
    );
    expect(said.length).toBeGreaterThan(5);
    expect(said.filter(({ connections }) => connections !== DEFAULT_POOL_LIMITS.max)).toEqual([]);
  });

  it('says which files of apps/api/src outside config/ touch process.env (docs/architecture.md)', () => {
    const readers = filesUnder('apps/api/src')
      .filter((path) => path.endsWith('.ts') && !path.endsWith('.spec.ts') && !path.startsWith('apps/api/src/config/'))
      .filter((path) => read(path).includes('process.env'))
      .map((path) => path.slice('apps/api/src/'.length));
    const bullet = paragraph('docs/architecture.md', '- **Configuration is read in one place**');
    const named = [...bullet.matchAll(/`([\w/.-]+\.ts)`/g)]
      .map((m) => m[1] as string)
      .filter((path) => path.includes('/') || path === 'main.ts')
      .filter((path) => existsSync(join(ROOT, 'apps/api/src', path)) && !path.startsWith('config/'));
    expect(readers.sort()).toEqual(named.sort());
  });

  it('quotes the defaults of the settings as the schema has them', () => {
    const defaults = new Map(allSettings().map(({ setting }) => [setting.variable, setting.fallback]));
    const unit: Record<string, number> = { ms: 1, s: 1000, minutes: 60_000, minute: 60_000, h: 3_600_000 };
    const quoted = DOCS.flatMap((doc) => {
      const prose = (text[doc] ?? '').replace(/<!-- configuration:start -->[\s\S]*<!-- configuration:end -->/, '');
      // `NAME` (5 s …, `NAME`, 20 …, `NAME` attempts at once (100 …, `NAME` (default 6,000 …; not `NAME` (0 = off).
      const pattern = new RegExp(
        '`([A-Z][A-Z0-9_]+)`(?: \\(| ?, | attempts? \\(|[^`.;\\n]{0,25}?\\()(?:default )?' +
          '([0-9][0-9,.]*)(?: (ms|s|minutes?|h)\\b)?(?! =)',
        'g',
      );
      return [...prose.matchAll(pattern)].flatMap(([quote, name, number, suffix]) => {
        const fallback = defaults.get(name as string);
        if (fallback === undefined || fallback === null) return [];
        const value = Number((number as string).replace(/,/g, '').replace(/\.$/, ''));
        const scale = suffix && (name as string).endsWith('_MS') ? (unit[suffix] ?? 1) : 1;
        return [{ doc, quote, says: value * scale, schema: Number(fallback) }];
      });
    });
    expect(quoted.length).toBeGreaterThan(15);
    expect(quoted.filter(({ says, schema }) => says !== schema)).toEqual([]);
  });

  it('names only settings, metrics, tables and constants the code has (or other software its own)', () => {
    const settings = allSettings().map(({ setting }) => setting);
    const fileVariables = new Set(settings.filter((s) => s.file).map((s) => `${s.variable}_FILE`));
    const sources = [
      ...['apps', 'libs', 'tools', 'deploy', 'docker', '.ci'].flatMap(filesUnder),
      'package.json',
      'eslint.config.mjs',
      'nx.json',
    ]
      .filter((path) => !path.endsWith('.md') && !path.endsWith('docs-facts.spec.ts'))
      .map((path) => read(path))
      .join('\n');
    const named = DOCS.flatMap((doc) =>
      [...(text[doc] ?? '').matchAll(/`([^`\n]+)`/g)].flatMap((span) => [
        ...[...(span[1] as string).matchAll(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g)].map((m) => ({ doc, name: m[0] })),
        ...[...(span[1] as string).matchAll(/(?<![\w./-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w/-])/g)].map((m) => ({
          doc,
          name: m[0],
        })),
      ]),
    );
    expect(named.length).toBeGreaterThan(200);
    const unknown = named.filter(
      ({ name }) =>
        !sources.includes(name) && !fileVariables.has(name) && !name.startsWith('OTEL_') && !OTHER_SOFTWARE.has(name),
    );
    expect(unknown).toEqual([]);
  });

  // Without the history (a shallow clone, an archive) the runs no longer kept cannot be looked for.
  (history ? it : it.skip)('cites only benchmark runs that bench/results keeps or the git history has', () => {
    const cited = new Set(
      DOCS.flatMap((doc) => [...(text[doc] ?? '').matchAll(/\b(\d{4}-\d{2}-\d{2}-[\w-]+?)(\*)?\.md\b/g)]).map(
        ([, name, glob]) => `${name}${glob ? '1' : ''}.md`,
      ),
    );
    expect(cited.size).toBeGreaterThan(10);
    const kept = new Set(readdirSync(join(ROOT, 'bench/results')));
    expect([...cited].filter((name) => !kept.has(name) && !history?.has(`bench/results/${name}`))).toEqual([]);
  });

  it("lists the webhook events as the description has them (docs/api.md's table)", () => {
    const description = JSON.parse(read('docs/openapi.json')) as {
      openapi: string;
      info: { version: string };
      components: { schemas: Record<string, { enum?: string[]; oneOf?: { $ref: string }[] }> };
    };
    const { EventType, WebhookEvent } = description.components.schemas;
    const rows = [...(text['docs/api.md'] ?? '').matchAll(/^\s*\| `([a-z_.]+)` \| `(\w+)` \|/gm)];
    expect(rows.map((m) => m[1]).sort()).toEqual([...(EventType?.enum ?? []), 'ping'].sort());
    expect(rows.map((m) => m[2]).sort()).toEqual(
      (WebhookEvent?.oneOf ?? []).map((s) => s.$ref.split('/').pop()).sort(),
    );
    const subscribe = words(paragraph('docs/api.md', '`POST /webhooks/endpoints {url, events}`'));
    expect((EventType?.enum ?? []).filter((type) => !subscribe.includes(`\`${type}\``))).toEqual([]);
    expect(text['docs/api.md']).toContain(`(OpenAPI ${description.openapi}, version ${description.info.version})`);
  });

  it('states the limits of libs/domain as LIMITS has them (docs/domain.md, docs/api.md)', () => {
    const n = (value: number) => value.toLocaleString('en-US');
    const range = ({ min, max }: { min: number; max: number }) => `${n(min)}–${n(max)}`;
    const days = LIMITS.apiKeyLifetimeMs.max / (24 * 3600 * 1000);
    const domain = words(text['docs/domain.md'] ?? '');
    for (const phrase of [
      `a name, ${range(LIMITS.categoryName)} characters after trimming and unique`,
      `description of up to ${n(LIMITS.categoryDescription.max)} characters`,
      `a name, ${range(LIMITS.petName)} characters after trimming, its category`,
      `from ${n(LIMITS.stockQuantity.min)} to ${n(LIMITS.stockQuantity.max)}`,
      `a quantity of ${range(LIMITS.orderQuantity)} units`,
      `a name of ${range(LIMITS.accountName)} characters and a role`,
      `optional name (${range(LIMITS.apiKeyName)} characters)`,
      `at most ${days} days ahead`,
      `counts against the ${LIMITS.activeApiKeys.max}.`,
      `text of ${range(LIMITS.messageText)} characters`,
    ]) {
      expect({ phrase, inDomainMd: domain.includes(phrase) }).toEqual({ phrase, inDomainMd: true });
    }
    const api = words(text['docs/api.md'] ?? '');
    for (const phrase of [
      `at most ${LIMITS.activeApiKeys.max} active keys`,
      `already has ${LIMITS.activeApiKeys.max} active ones`,
      `already has ${LIMITS.webhookEndpoints.max} |`,
      `lift the stock above ${n(LIMITS.stockQuantity.max)}`,
      `\`limit\`: ${LIMITS.pageSize.min}–${LIMITS.pageSize.max}, default ${LIMITS.pageSize.default}.`,
      `\`ids\` (≤ ${LIMITS.petIdsFilter.max})`,
      `at least ${LIMITS.petNameFilter.minRun} letters or digits in a row`,
      `header (${range(LIMITS.idempotencyKey)} characters)`,
      `at most ${days} days ahead`,
    ]) {
      expect({ phrase, inApiMd: api.includes(phrase) }).toEqual({ phrase, inApiMd: true });
    }
  });
});

/**
 * Names of other software's settings and columns the docs use (PostgreSQL, PgBouncer, NATS, nginx), which the code
 * has no reason to spell.
 */
const OTHER_SOFTWARE = new Set([
  'archive_command',
  'client_body_timeout',
  'default_pool_size',
  'max_ack_pending',
  'max_msgs',
  'max_standby_streaming_delay',
  'recovery_target_time',
  'replay_lag',
  'server_lifetime',
  'target_session_attrs',
  'write_lag',
]);

interface Slice {
  application: string[];
  persistence: string[];
  api: string[];
  uses: string[];
}

/** eslint.config.mjs's SLICES: a literal of arrays of strings, read as data (the config itself is ESM). */
function declaredSlices(): Record<string, Slice> {
  const source = read('eslint.config.mjs');
  const literal = /export const SLICES = (\{[\s\S]*?\n\});/.exec(source)?.[1];
  if (!literal) throw new Error('eslint.config.mjs: no `export const SLICES = {…};`');
  const json = literal
    .replace(/\/\/.*$/gm, '')
    .replace(/'/g, '"')
    .replace(/([{,]\s*)([A-Za-z]\w*):/g, '$1"$2":')
    .replace(/,(\s*[}\]])/g, '$1');
  return JSON.parse(json) as Record<string, Slice>;
}

/** Every path the git history has held, or null without the history (not a clone, or a shallow one). */
function gitHistory(): Set<string> | null {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' });
    if (git('rev-parse', '--is-shallow-repository').trim() !== 'false') return null;
    return new Set(git('log', '--all', '--format=', '--name-only', '--', 'bench/results').split('\n').filter(Boolean));
  } catch {
    return null;
  }
}
