import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CODES_OF_NO_OPERATION } from './error-codes.openapi';
import { ERROR_CODES } from '../common/errors/error-codes';

const ROOT = resolve(__dirname, '../../../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const sorted = (pairs: Iterable<string>) => [...new Set(pairs)].sort();

type Json = Record<string, unknown>;
const document = JSON.parse(read('docs/openapi.json')) as {
  paths: Record<
    string,
    Record<string, { responses?: Record<string, { content?: Record<string, { schema?: Json }> }> }>
  >;
  components: { schemas: Record<string, { enum?: string[] }> };
};

/** Every (operation, status, code) the committed description lists (npm run openapi:check keeps it the app's). */
function documentedPerOperation(): Array<{ operation: string; status: number; code: string }> {
  const listed = [];
  for (const [route, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        if (Number(status) < 400) continue;
        const allOf = response.content?.['application/json']?.schema?.['allOf'] as Json[] | undefined;
        const code = (allOf?.[1]?.['properties'] as Record<string, { enum?: string[] }> | undefined)?.['code'];
        if (!code?.enum) throw new Error(`${method} ${route} ${status} lists no codes`);
        for (const c of code.enum) listed.push({ operation: `${method} ${route}`, status: Number(status), code: c });
      }
    }
  }
  return listed;
}

/**
 * One list of error codes, written four times for four readers: ERROR_CODES (the code), docs/api.md's errors table
 * (people), the OpenAPI description (`ErrorCode`, and per operation), and the typed client's `ErrorCode` union
 * (generated from the description). They must be equal, codes and statuses.
 */
describe('the error codes', () => {
  const table = sorted(Object.entries(ERROR_CODES).flatMap(([code, statuses]) => statuses.map((s) => `${s} ${code}`)));

  it("equal docs/api.md's errors table, status by status", () => {
    const rows = [...read('docs/api.md').matchAll(/^\| (\d{3}) \| `([a-z_]+)` \|/gm)].map((m) => `${m[1]} ${m[2]}`);
    expect(sorted(rows)).toEqual(table);
  });

  it("equal the description's ErrorCode, and the client's union generated from it", () => {
    expect(document.components.schemas['ErrorCode'].enum).toEqual(Object.keys(ERROR_CODES));
    const schema = read('libs/client/src/generated/schema.ts');
    const union = /^ {4}ErrorCode:\n((?: {6}\| '[a-z_]+'[;\n]+)+)/m.exec(schema)?.[1] ?? '';
    expect([...union.matchAll(/'([a-z_]+)'/g)].map((m) => m[1])).toEqual(Object.keys(ERROR_CODES));
  });

  it('are each listed on some operation with their status, but those answered before any operation', () => {
    const listed = documentedPerOperation();
    expect(listed.filter(({ status, code }) => !table.includes(`${status} ${code}`))).toEqual([]);
    const onOperations = sorted(listed.map(({ status, code }) => `${status} ${code}`));
    const elsewhere = CODES_OF_NO_OPERATION.flatMap((code) => ERROR_CODES[code].map((s) => `${s} ${code}`));
    expect(sorted([...onOperations, ...elsewhere])).toEqual(table);
    expect(onOperations.filter((pair) => elsewhere.includes(pair))).toEqual([]);
  });

  it('are listed where the rules say: every operation its 500 and 503, every write its 409 conflict', () => {
    const listed = documentedPerOperation();
    const operations = sorted(listed.map((l) => l.operation));
    const has = (operation: string, status: number, code: string) =>
      listed.some((l) => l.operation === operation && l.status === status && l.code === code);
    for (const operation of operations) {
      expect([operation, has(operation, 500, 'internal_error')]).toEqual([operation, true]);
      expect([operation, has(operation, 503, 'service_unavailable')]).toEqual([operation, true]);
      if (!operation.startsWith('get '))
        expect([operation, has(operation, 409, 'conflict')]).toEqual([operation, true]);
    }
    expect(has('post /store/orders', 409, 'insufficient_stock')).toBe(true);
    expect(has('post /store/orders', 422, 'unknown_pet')).toBe(true);
    expect(has('post /webhooks/endpoints', 400, 'invalid_webhook_url')).toBe(true);
    expect(has('get /pets/{petId}', 410, 'operation_sunset')).toBe(true);
  });
});
