// Prints the test suite's tiers (tools/jest/tiers.cjs) from a jest --json result file: the seconds each tier's files
// took (summed: files run in parallel when jest has several workers, so the sum can exceed the wall time), its share,
// and the slowest files. `--write` puts that into docs/development.md's tier table instead (its `test-tiers` section):
//   npm test -- --json --outputFile=tmp/jest-results.json
//   node tools/jest/tiers.mjs tmp/jest-results.json [--write]
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sections from '../docs/sections.cjs';
import tiers from './tiers.cjs';

const [file = 'tmp/jest-results.json'] = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const body = tiers.tiersSection(JSON.parse(readFileSync(file, 'utf8')));
if (process.argv.includes('--write')) {
  const doc = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '../../docs/development.md');
  writeFileSync(doc, sections.withSection(readFileSync(doc, 'utf8'), 'test-tiers', body));
  console.log('docs/development.md: the tier table written from', file);
} else {
  console.log(body);
}
