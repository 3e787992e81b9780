// Prints the test suite's tiers from a jest --json result file: per project and kind (unit, contract/PostgreSQL
// spec, e2e over HTTP), how many files and tests, and the seconds their files took (summed: files run in parallel
// when jest has several workers, so the sum can exceed the wall time).
//   node tools/jest/tiers.mjs tmp/jest-results.json
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

const results = JSON.parse(readFileSync(process.argv[2] ?? 'tmp/jest-results.json', 'utf8'));
const tiers = new Map();
for (const file of results.testResults) {
  const path = relative(process.cwd(), file.name);
  const tier = path.startsWith('apps/api/test/')
    ? path.includes('.e2e.')
      ? 'api: e2e over HTTP'
      : 'api: process and file checks'
    : `${path.split('/').slice(0, 2).join('/')}`;
  const entry = tiers.get(tier) ?? { files: 0, tests: 0, seconds: 0 };
  entry.files++;
  entry.tests += file.assertionResults.length;
  entry.seconds += (file.endTime - file.startTime) / 1000;
  tiers.set(tier, entry);
}
console.log('| tier | files | tests | seconds (sum of files) |');
console.log('|---|---|---|---|');
for (const [tier, e] of [...tiers].sort((a, b) => b[1].seconds - a[1].seconds)) {
  console.log(`| ${tier} | ${e.files} | ${e.tests} | ${Math.round(e.seconds)} |`);
}
const slowest = results.testResults
  .map((f) => [relative(process.cwd(), f.name), (f.endTime - f.startTime) / 1000])
  .sort((a, b) => b[1] - a[1])
  .slice(0, 10);
console.log(`\nslowest files: ${slowest.map(([f, s]) => `${f} ${Math.round(s)} s`).join(', ')}`);
