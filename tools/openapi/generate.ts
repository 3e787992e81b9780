/**
 * Writes the OpenAPI description of the app to docs/openapi.json (`npm run openapi:generate`), from the modules'
 * metadata: no server, no database. With `--check`, writes nothing and fails when the committed file differs.
 * The settings are the defaults (not this shell's environment): the description must not depend on who generates it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../apps/api/src/config/app-config';
import { createOpenApiDocument } from '../../apps/api/src/openapi-document';

export const OPENAPI_FILE = join(__dirname, '../../docs/openapi.json');

async function main(): Promise<void> {
  const text = `${JSON.stringify(await createOpenApiDocument(loadConfig({})), null, 2)}\n`;
  if (process.argv.includes('--check')) {
    if (readFileSync(OPENAPI_FILE, 'utf8') !== text) {
      console.error('docs/openapi.json differs from the app: run `npm run openapi:generate` and commit the result.');
      process.exit(1);
    }
    console.log('docs/openapi.json matches the app.');
    return;
  }
  writeFileSync(OPENAPI_FILE, text);
  console.log(`Wrote ${OPENAPI_FILE}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
