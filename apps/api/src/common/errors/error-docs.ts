import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_CODES, type PublicErrorCode } from './error-codes';
import { MarkdownOptions, renderInline, renderMarkdown, slugOf } from './guide-markdown';

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

/** A code's entry in docs/api.md ("Each code": `#### \`code\``): its three parts, in Markdown. */
export interface ErrorEntry {
  code: string;
  /** `**Cause** (409): …`, without its label. */
  cause: string;
  /** `**What to do**: …` up to the example, without its label (it may hold a list). */
  action: string;
  /** The example answer: the JSON text of its code block. */
  example: string;
}

// Set by webpack's DefinePlugin when the bundle is built (apps/api/webpack.config.js reads docs/api.md): the bundle
// carries no docs/ beside it, in the image least of all.
declare const __PETSTORE_API_GUIDE__: string | undefined;

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

/** docs/api.md, once per process: from the bundle when built, else (tests, ts-node) the workspace's file. */
export function apiGuide(): string {
  return typeof __PETSTORE_API_GUIDE__ !== 'undefined'
    ? __PETSTORE_API_GUIDE__
    : readFileSync(join(__dirname, '../../../../../docs/api.md'), 'utf8');
}

/** A heading of the guide and the lines of its section (up to the next heading of its level or above). */
interface GuideSection {
  level: number;
  title: string;
  slug: string;
  start: number;
  end: number;
}

function sectionsOf(lines: string[]): GuideSection[] {
  const headings: Array<{ level: number; title: string; line: number }> = [];
  let fenced = false;
  lines.forEach((line, index) => {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^(#{2,4}) (.*)$/.exec(line);
    if (heading) headings.push({ level: heading[1].length, title: heading[2], line: index });
  });
  return headings.map((heading, index) => {
    const next = headings.slice(index + 1).find((other) => other.level <= heading.level);
    return { ...heading, slug: slugOf(heading.title), start: heading.line, end: next ? next.line : lines.length };
  });
}

const ENTRY_HEADING = /^#### `([a-z_]+)`$/;

/** Each code's entry of docs/api.md ("Each code"), by code; an entry missing a part has it empty. */
export function errorEntriesOf(markdown: string): Map<string, ErrorEntry> {
  const lines = markdown.split('\n');
  const entries = new Map<string, ErrorEntry>();
  for (const section of sectionsOf(lines)) {
    const code = ENTRY_HEADING.exec(lines[section.start])?.[1];
    if (!code || section.level !== 4) continue;
    const body = lines.slice(section.start + 1, section.end).join('\n');
    const cause = /\*\*Cause\*\*\s*([\s\S]*?)(?=\*\*What to do\*\*|```|$)/.exec(body)?.[1] ?? '';
    const action = /\*\*What to do\*\*:?\s*([\s\S]*?)(?=```|$)/.exec(body)?.[1] ?? '';
    const example = /```json\n([\s\S]*?)\n```/.exec(body)?.[1] ?? '';
    entries.set(code, { code, cause: cause.trim(), action: action.trim(), example: example.trim() });
  }
  return entries;
}

/** The anchors a piece of the guide links to (`[…](#anchor)`). */
const anchorsIn = (markdown: string) => [...markdown.matchAll(/\]\(#([^)\s]+)\)/g)].map((match) => match[1]);

const escape = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * The page at ERROR_DOCS_PATH, all of it from docs/api.md: the errors table (each code linking to its entry), each
 * code's entry anchored by the code (`#insufficient_stock`: what `documentationUrl` points to) with its cause, what to
 * do and an example answer, and then the sections of the guide those entries and the table link to, whole, each
 * anchored as the guide's own heading is (`#rate-limits`). A link is kept only where it leads to an anchor of this
 * page (or the description, /docs and /openapi.json); links into the other documents of the repository, which the
 * service does not serve, are their text alone. A code of ERROR_CODES the guide has no entry for still gets its
 * anchor, with its row of the table. Plain HTML without script or style (the API's Content-Security-Policy allows
 * none).
 */
export function errorDocsPage(markdown: string = apiGuide()): string {
  const lines = markdown.split('\n');
  const rows = errorTableOf(markdown);
  const entries = errorEntriesOf(markdown);
  const codes = [...new Set([...rows.map((row) => row.code), ...Object.keys(ERROR_CODES)])];
  const sections = sectionsOf(lines);

  // The guide's sections the table and the entries point to, whole; one inside another is not repeated.
  const pointedTo = new Set(
    [...rows.map((row) => row.when), ...[...entries.values()].map((entry) => `${entry.cause}\n${entry.action}`)]
      .flatMap(anchorsIn)
      .filter((anchor) => !codes.includes(anchor)),
  );
  const wanted = sections.filter((section) => pointedTo.has(section.slug));
  const served = wanted.filter(
    (section) => !wanted.some((outer) => outer !== section && outer.start < section.start && section.end <= outer.end),
  );
  const anchors = new Set([
    ...codes,
    ...sections
      .filter((section) => served.some((outer) => outer.start <= section.start && section.end <= outer.end))
      .map((section) => section.slug),
  ]);
  const options: MarkdownOptions = {
    linkTo: (href) => {
      if (href.startsWith('#')) return anchors.has(href.slice(1)) ? href : null;
      return href === '/docs' || href === '/openapi.json' ? href : null;
    },
  };

  const statusOf = (code: string) =>
    rows.find((row) => row.code === code)?.status ?? ERROR_CODES[code as PublicErrorCode]?.[0];
  const table = codes.map((code) => {
    const row = rows.find((r) => r.code === code);
    return (
      `<tr><td>${statusOf(code)}</td><td><a href="#${escape(code)}"><code>${escape(code)}</code></a></td>` +
      `<td>${row ? renderInline(row.when, options) : ''}</td></tr>\n`
    );
  });
  const entryHtml = codes.map((code) => {
    const entry = entries.get(code);
    const row = rows.find((r) => r.code === code);
    const parts = entry
      ? `${renderMarkdown(`**Cause** ${entry.cause}`, options)}\n` +
        `${renderMarkdown(`**What to do**: ${entry.action}`, options)}\n` +
        `<p>For example:</p>\n<pre><code class="language-json">${escape(entry.example)}</code></pre>\n`
      : `<p>${row ? renderInline(row.when, options) : ''}</p>\n`;
    const heading = `<h3><code>${escape(code)}</code> (${statusOf(code)})</h3>`;
    return `<section id="${escape(code)}">\n${heading}\n${parts}</section>\n`;
  });
  const guide = served.map((section) => renderMarkdown(lines.slice(section.start, section.end).join('\n'), options));

  return (
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Petstore API: error codes</title></head>\n' +
    '<body><h1>Error codes</h1>\n' +
    '<p>Every error answers <code>{code, message, status}</code> (validation errors add <code>details</code>), and ' +
    "<code>documentationUrl</code>, its code's entry below. Branch on <code>code</code>, which is stable; " +
    '<code>message</code> is for people. Each operation of <a href="/docs">the API reference</a> ' +
    '(<a href="/openapi.json">its OpenAPI description</a>) names the codes it can answer with. A client must accept ' +
    'a code it does not know: new ones may be added.</p>\n' +
    `<table><thead><tr><th>Status</th><th>Code</th><th>When</th></tr></thead><tbody>\n${table.join('')}` +
    '</tbody></table>\n' +
    `<h2 id="each-code">Each code</h2>\n${entryHtml.join('')}` +
    '<h2 id="from-the-guide">From the API guide</h2>\n' +
    '<p>The sections of the API guide (docs/api.md) that the entries above point to.</p>\n' +
    `${guide.join('\n')}\n</body></html>\n`
  );
}
