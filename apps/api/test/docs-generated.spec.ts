import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The generated sections of the docs are what their generators write (issue 51: facts that drift are written from
 * what they describe, not typed): README.md's performance table from the reports of the runs it cites (`npm run
 * docs`), docs/development.md's test tiers from tools/jest/tiers.cjs and a run of the suite (tools/jest/tiers.mjs).
 * The configuration table has its own spec (apps/api/src/config/config-table.spec.ts).
 * tools/docs and tools/jest are no Nx projects and export no API: these read their CommonJS modules as data.
 */
/* eslint-disable @nx/enforce-module-boundaries */
const sections = require('../../../tools/docs/sections.cjs') as {
  sectionOf: (document: string, name: string) => string;
  withSection: (document: string, name: string, body: string) => string;
  section: (name: string, body: string) => string;
  wrap: (text: string, width?: number) => string;
};
const { performanceSection, README_SERIES, seriesFiles } = require('../../../tools/docs/performance.cjs') as {
  performanceSection: () => string;
  README_SERIES: string;
  seriesFiles: (series: string) => string[];
};
const tiers = require('../../../tools/jest/tiers.cjs') as {
  TIERS: { label: string }[];
  tierOf: (path: string) => { label: string } | undefined;
  testFiles: () => string[];
  tiersSection: (results: unknown) => string;
  tableTiers: (section: string) => string[];
};
/* eslint-enable @nx/enforce-module-boundaries */

const ROOT = join(__dirname, '../../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

describe("README.md's performance table", () => {
  it('is the one written from the reports of the runs it cites (npm run docs)', () => {
    expect(seriesFiles(README_SERIES).length).toBeGreaterThan(1);
    expect(sections.sectionOf(read('README.md'), 'performance')).toBe(
      sections.section('performance', performanceSection()),
    );
  });
});

describe("docs/development.md's test tiers", () => {
  const files = tiers.testFiles();

  it('give every test file a tier, and every tier a test file', () => {
    expect(files).toEqual(expect.arrayContaining(['apps/api/test/docs-generated.spec.ts']));
    expect(files.filter((path) => tiers.tierOf(path) === undefined)).toEqual([]);
    const used = new Set(files.map((path) => tiers.tierOf(path)?.label));
    expect(tiers.TIERS.map((tier) => tier.label).filter((label) => !used.has(label))).toEqual([]);
  });

  it('are the tiers of its table, in order (tools/jest/tiers.mjs --write writes it from a run)', () => {
    const table = sections.sectionOf(read('docs/development.md'), 'test-tiers');
    expect(tiers.tableTiers(table)).toEqual(tiers.TIERS.map((tier) => tier.label));
  });

  it('are written from a jest --json result: seconds and shares per tier, the wall time, the slowest files', () => {
    const at = (path: string, seconds: number, start = 0) => ({
      name: join(ROOT, path),
      startTime: Date.UTC(2026, 10, 28) + start,
      endTime: Date.UTC(2026, 10, 28) + start + seconds * 1000,
    });
    const written = tiers.tiersSection({
      startTime: Date.UTC(2026, 10, 28),
      testResults: [at('libs/domain/src/pet/pet.spec.ts', 3), at('apps/api/test/pets.e2e.spec.ts', 9, 1000)],
    });
    expect(written).toContain('| domain (`libs/domain`): aggregates and rules, no I/O | 3 | 25 % |');
    expect(written).toContain('what only HTTP or a running process shows | 9 | 75 % |');
    expect(written).toContain('| seconds (2026-11-28) | share |');
    expect(written).toContain("That run took 10 s; its files' own seconds add up to 12.");
    expect(tiers.tableTiers(written)).toEqual(tiers.TIERS.map((tier) => tier.label));
    expect(() => tiers.tiersSection({ startTime: 0, testResults: [at('elsewhere/x.spec.ts', 1)] })).toThrow(/no tier/);
  });
});

describe('a generated section', () => {
  const document = '# Doc\n\nBefore.\n\n<!-- part:start -->\nold\n<!-- part:end -->\n\nAfter with $1 and $&.\n';

  it('is replaced between its markers only, whatever its text holds', () => {
    expect(sections.withSection(document, 'part', 'new $1 $& text\n')).toBe(
      '# Doc\n\nBefore.\n\n<!-- part:start -->\nnew $1 $& text\n<!-- part:end -->\n\nAfter with $1 and $&.\n',
    );
    expect(sections.sectionOf(document, 'part')).toBe('<!-- part:start -->\nold\n<!-- part:end -->');
    expect(() => sections.withSection(document, 'other', 'x')).toThrow(/No section other/);
  });

  it('wraps its prose at 120 characters, as the docs are', () => {
    const wrapped = sections.wrap(`${'word '.repeat(60)}${'x'.repeat(130)}`);
    expect(wrapped.split('\n').map((line) => line.length <= 120 || !line.includes(' '))).not.toContain(false);
    expect(wrapped.replace(/\n/g, ' ')).toBe(`${'word '.repeat(60)}${'x'.repeat(130)}`);
  });
});
