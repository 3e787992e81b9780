// The test suite's tiers, declared once: docs/development.md's tier table is written from them and from a run of the
// suite (tools/jest/tiers.mjs), and apps/api/test/docs-generated.spec.ts fails while a test file belongs to no tier,
// a tier has no file, or the table's tiers are not these. A new kind of test is one line here.
// CommonJS, so that tiers.mjs and the jest specs load it as it is.
const { readdirSync } = require('node:fs');
const { join, relative } = require('node:path');
const { wrap } = require('../docs/sections.cjs');

const ROOT = join(__dirname, '../..');
/** The file names jest runs (the Nx preset's testMatch). */
const TEST_FILE = /\.(spec|test)\.[mc]?[jt]sx?$/;
const under =
  (...folders) =>
  (path) =>
    folders.some((folder) => path.startsWith(`${folder}/`));
const e2e = (path) => path.startsWith('apps/api/test/') && path.includes('.e2e.');

/** In the order of the table; a test file belongs to the first tier whose `has` takes its path. */
const TIERS = [
  { label: 'domain (`libs/domain`): aggregates and rules, no I/O', has: under('libs/domain') },
  {
    label: 'use cases on in-memory fakes (`libs/application`), with the contract suites',
    has: under('libs/application'),
  },
  {
    label: 'app units (`apps/api/src/**/*.spec.ts`): config, pipeline pieces, folder and global-module checks',
    has: under('apps/api/src'),
  },
  {
    // immich's test/medium: the business cases of the use cases on the real repositories, without Nest or HTTP.
    label: 'medium: use cases on the PostgreSQL repositories, no HTTP (`libs/infrastructure/test/medium`)',
    has: under('libs/infrastructure/test/medium'),
  },
  {
    label: 'PostgreSQL adapters and the database session (`libs/infrastructure`), contract suites on PostgreSQL',
    has: under('libs/infrastructure'),
  },
  { label: 'client (`libs/client`): unit and type-level tests', has: under('libs/client') },
  { label: 'HTTP e2e (`apps/api/test/*.e2e.spec.ts`): what only HTTP or a running process shows', has: e2e },
  {
    label: 'files and processes (`apps/api/test/*.spec.ts`: the compose file, Node flags, the docs, bench results)',
    has: (path) => under('apps/api/test')(path) && !e2e(path),
  },
  { label: 'the generator in a scratch workspace (`tools/plugin`)', has: under('tools/plugin') },
  {
    label: 'the test database and embedded PostgreSQL (`libs/testing`, `libs/embedded-postgres`)',
    has: under('libs/testing', 'libs/embedded-postgres'),
  },
];

/** The tier of a test file (its path from the repository's root), or undefined. */
function tierOf(path) {
  return TIERS.find((tier) => tier.has(path.split('\\').join('/')));
}

/** Every test file jest would run, as paths from the repository's root. */
function testFiles(root = ROOT) {
  const walk = (dir) =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) return ['node_modules', 'dist', 'tmp'].includes(entry.name) ? [] : walk(path);
      return TEST_FILE.test(entry.name) ? [path] : [];
    });
  return ['apps', 'libs', 'tools'].flatMap(walk);
}

/**
 * The tier section of docs/development.md from a `jest --json` result: each tier's seconds (its files' own, summed:
 * files run side by side, so the sum exceeds the wall time) and share, the run's date and wall time, the slowest files.
 */
function tiersSection(results, root = ROOT) {
  const seconds = new Map(TIERS.map((tier) => [tier, 0]));
  const files = results.testResults.map((file) => ({
    path: relative(root, file.name).split('\\').join('/'),
    seconds: (file.endTime - file.startTime) / 1000,
  }));
  for (const file of files) {
    const tier = tierOf(file.path);
    if (!tier) throw new Error(`${file.path} belongs to no tier of tools/jest/tiers.cjs`);
    seconds.set(tier, seconds.get(tier) + file.seconds);
  }
  const total = [...seconds.values()].reduce((sum, s) => sum + s, 0);
  const wall = (Math.max(...results.testResults.map((file) => file.endTime)) - results.startTime) / 1000;
  const date = new Date(results.startTime).toISOString().slice(0, 10);
  const slowest = files
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, 5)
    .map((file) => `\`${file.path}\` ${Math.round(file.seconds)} s`);
  return [
    '<!-- Written by `node tools/jest/tiers.mjs <jest --json output> --write` from a run of `npm test`: the tiers are',
    "tools/jest/tiers.cjs, the seconds the run's. -->",
    '',
    `| tier | seconds (${date}) | share |`,
    '|---|---|---|',
    ...TIERS.map((tier) => {
      const s = seconds.get(tier);
      return `| ${tier.label} | ${Math.round(s)} | ${Math.round((100 * s) / total)} % |`;
    }),
    '',
    wrap(
      `That run took ${Math.round(wall)} s; its files' own seconds add up to ${Math.round(total)}. The slowest ` +
        `files: ${slowest.join(', ')}.`,
    ),
  ].join('\n');
}

/** The tier labels of a tier table (its first column), in order. */
function tableTiers(section) {
  const rows = [...section.matchAll(/^\| (.+?) \| [^|]+ \| [^|]+ \|$/gm)].map((row) => row[1]);
  return rows.filter((label) => label !== 'tier');
}

module.exports = { TIERS, tierOf, testFiles, tiersSection, tableTiers };
