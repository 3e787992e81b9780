/**
 * `npm run docs`: writes the generated sections of README.md and docs/*.md, each between its markers, from what they
 * describe: the configuration tables of docs/operations.md from the settings' schema (apps/api/src/config/schema.ts),
 * README.md's performance table from the reports of the runs it cites (tools/docs/performance.cjs). `--check` only
 * says whether the files are up to date (exit 1 when not), as config-table.spec.ts and docs-generated.spec.ts do in
 * the test suite. The test tiers' table is written from a run of the suite instead: tools/jest/tiers.mjs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withConfigurationTable } from '../../apps/api/src/config/config-table';

const { withSection } = require('./sections.cjs') as {
  withSection: (doc: string, name: string, body: string) => string;
};
const { performanceSection } = require('./performance.cjs') as { performanceSection: () => string };

const ROOT = join(__dirname, '../..');
const GENERATED: Record<string, (document: string) => string> = {
  'docs/operations.md': withConfigurationTable,
  'README.md': (document) => withSection(document, 'performance', performanceSection()),
};

const check = process.argv.includes('--check');
let stale = 0;
for (const [file, generate] of Object.entries(GENERATED)) {
  const current = readFileSync(join(ROOT, file), 'utf8');
  const wanted = generate(current);
  if (current === wanted) continue;
  if (check) {
    console.error(`${file}: a generated section differs from what it describes; run npm run docs`);
    stale++;
  } else {
    writeFileSync(join(ROOT, file), wanted);
    console.log(`${file}: generated sections written`);
  }
}
process.exit(stale ? 1 : 0);
