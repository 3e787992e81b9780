import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../../../../..');
const SOURCES = ['apps/api/src', 'libs/domain/src', 'libs/application/src', 'libs/infrastructure/src'];

/** Where a public error code is written in the code: a domain error's `code`, an ApiError, the HTTP tables. */
const CODE_PATTERNS = [
  /readonly code = '([a-z]+(?:_[a-z]+)*)'/g,
  /new ApiError\(\s*\d{3},\s*'([a-z]+(?:_[a-z]+)*)'/g,
  /\bcode: '([a-z]+(?:_[a-z]+)*)'/g,
  /\brespond\(\s*\d{3},\s*'([a-z]+(?:_[a-z]+)*)'/g,
  /^\s*\d{3}: '([a-z]+(?:_[a-z]+)*)',$/gm,
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/**
 * docs/api.md's errors table is the clients' list of error codes: every code the service can answer with
 * has a row there. A code added to the code without its row fails here, naming it.
 */
describe('docs/api.md lists every error code', () => {
  const codes = new Set<string>();
  for (const file of SOURCES.flatMap((dir) => sourceFiles(join(ROOT, dir)))) {
    const text = readFileSync(file, 'utf8');
    for (const pattern of CODE_PATTERNS) for (const match of text.matchAll(pattern)) codes.add(match[1]);
  }
  const documented = new Set(
    [...readFileSync(join(ROOT, 'docs/api.md'), 'utf8').matchAll(/^\| \d{3} \| `([a-z_]+)` \|/gm)].map((m) => m[1]),
  );

  it('finds the codes in the sources', () => {
    expect([...codes]).toEqual(expect.arrayContaining(['insufficient_stock', 'unauthorized', 'internal_error']));
  });

  it('has a row in the errors table for each', () => {
    expect([...codes].filter((code) => !documented.has(code)).sort()).toEqual([]);
  });
});
