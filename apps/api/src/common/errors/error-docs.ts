import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_CODES, type PublicErrorCode } from './error-codes';

/** Where the service serves its list of error codes (create-app.ts registers it beside the description at /docs). */
export const ERROR_DOCS_PATH = '/docs/errors';

/**
 * The `documentationUrl` of an error body: its code's entry in the served list, as a path of the service itself
 * (a URI reference: the host a client reached, behind whatever proxy, is the one that serves it).
 */
export function documentationUrlOf(code: PublicErrorCode): string {
  return `${ERROR_DOCS_PATH}#${code}`;
}

/** One row of docs/api.md's errors table: a status, a code, and when it comes (Markdown). */
export interface ErrorTableRow {
  status: number;
  code: string;
  when: string;
}

// Set by webpack's DefinePlugin when the bundle is built (apps/api/webpack.config.js reads docs/api.md's table with
// the same pattern as errorTableOf): the bundle carries no docs/ beside it, in the image least of all.
declare const __PETSTORE_ERROR_TABLE__: ErrorTableRow[] | undefined;

/** A row of the table: `| 409 | \`insufficient_stock\` | ordering more units than are in stock |`. */
export const ERROR_TABLE_ROW = /^\| (\d{3}) \| `([a-z_]+)` \| (.*) \|$/gm;

/** The rows of docs/api.md's errors table (the clients' list of codes; a test holds it equal to ERROR_CODES). */
export function errorTableOf(markdown: string): ErrorTableRow[] {
  return [...markdown.matchAll(ERROR_TABLE_ROW)].map(([, status, code, when]) => ({
    status: Number(status),
    code: code as string,
    when: when as string,
  }));
}

/** The table, once per process: from the bundle when built, else (tests, ts-node) from the workspace's docs/api.md. */
export function errorTable(): ErrorTableRow[] {
  return typeof __PETSTORE_ERROR_TABLE__ !== 'undefined'
    ? __PETSTORE_ERROR_TABLE__
    : errorTableOf(readFileSync(join(__dirname, '../../../../../docs/api.md'), 'utf8'));
}

const escape = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The Markdown of a table cell as HTML: code spans kept, links reduced to their text (they point into docs/). */
function inline(markdown: string): string {
  return escape(markdown.replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')).replace(/`([^`]+)`/g, '<code>$1</code>');
}

/**
 * The page at ERROR_DOCS_PATH: docs/api.md's errors table, one row per status and code, each code's first row
 * anchored by the code (`#insufficient_stock`); a code of ERROR_CODES the table lacks still gets its anchor. Plain HTML
 * without script or style (the API's Content-Security-Policy allows none).
 */
export function errorDocsPage(rows: ErrorTableRow[] = errorTable()): string {
  const anchored = new Set<string>();
  const row = (status: string, code: string, when: string) => {
    const id = anchored.has(code) ? '' : ` id="${escape(code)}"`;
    anchored.add(code);
    return `<tr${id}><td>${status}</td><td><code>${escape(code)}</code></td><td>${when}</td></tr>\n`;
  };
  const body = rows.map((r) => row(String(r.status), r.code, inline(r.when)));
  for (const code of Object.keys(ERROR_CODES) as PublicErrorCode[]) {
    if (!anchored.has(code)) body.push(row(ERROR_CODES[code].join(', '), code, ''));
  }
  return (
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Petstore API: error codes</title></head>\n' +
    '<body><h1>Error codes</h1>\n' +
    '<p>Every error answers <code>{code, message, status}</code> (validation errors add <code>details</code>), and ' +
    "<code>documentationUrl</code>, its code's row below. Branch on <code>code</code>, which is stable; " +
    '<code>message</code> is for people. Each operation of <a href="/docs">the API reference</a> ' +
    '(<a href="/openapi.json">its OpenAPI description</a>) names the codes it can answer with. A client must accept ' +
    'a code it does not know: new ones may be added.</p>\n' +
    `<table><thead><tr><th>Status</th><th>Code</th><th>When</th></tr></thead><tbody>\n${body.join('')}` +
    '</tbody></table></body></html>\n'
  );
}
