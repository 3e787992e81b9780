/**
 * `npm run docs:config`: writes the configuration tables of docs/operations.md from the schema
 * (apps/api/src/config/schema.ts), between its configuration markers. `--check` only says whether the file
 * is up to date (exit 1 when not), as config-table.spec.ts does in the test suite.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withConfigurationTable } from '../../apps/api/src/config/config-table';

const file = join(__dirname, '../../docs/operations.md');
const current = existsSync(file) ? readFileSync(file, 'utf8') : '# Operations\n';
const wanted = withConfigurationTable(current);
if (process.argv.includes('--check')) {
  if (current !== wanted) {
    console.error('docs/operations.md: the configuration table differs from the schema; run npm run docs:config');
    process.exit(1);
  }
} else if (current !== wanted) {
  writeFileSync(file, wanted);
  console.log('docs/operations.md: configuration table written');
}
