/**
 * The Markdown of docs/api.md as HTML, for the pages the service serves from it (`/docs/errors`): the subset the guide
 * is written in, and nothing more. Headings (`##`–`####`, each with the anchor GitHub gives it), paragraphs, `-`
 * lists (nested by two spaces, their items holding paragraphs, code blocks and tables), fenced code blocks, pipe
 * tables; inline, code spans, `**strong**` and links. A link is kept only where `linkTo` says it leads somewhere the
 * page can reach; any other is its text alone. No raw HTML passes: every character of the source is escaped.
 *
 * Hand-written: no Markdown library is among the dependencies, and this subset is all the guide uses (its spec
 * renders the whole guide). A dependency such as `marked` would replace it, links rewritten by its renderer hooks.
 */

export interface MarkdownOptions {
  /** The `href` a link of the guide gets on the page, or null to render its text alone. */
  linkTo(href: string): string | null;
}

const escape = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The anchor GitHub gives a heading: lower case, without punctuation but `-` and `_`, spaces as `-`. */
export function slugOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Inline Markdown as HTML: code spans, `**strong**`, links (`linkTo` decides), the rest escaped. */
export function renderInline(text: string, options: MarkdownOptions): string {
  let html = '';
  let i = 0;
  while (i < text.length) {
    if (text[i] === '`') {
      const end = text.indexOf('`', i + 1);
      if (end > i) {
        html += `<code>${escape(text.slice(i + 1, end))}</code>`;
        i = end + 1;
        continue;
      }
    }
    if (text[i] === '[') {
      const link = /^\[((?:`[^`]*`|[^\]`])+)\]\(([^)\s]*)\)/.exec(text.slice(i));
      if (link) {
        const inner = renderInline(link[1], options);
        const href = options.linkTo(link[2]);
        html += href === null ? inner : `<a href="${escape(href)}">${inner}</a>`;
        i += link[0].length;
        continue;
      }
    }
    if (text.startsWith('**', i)) {
      const end = closingStrong(text, i + 2);
      if (end > 0) {
        html += `<strong>${renderInline(text.slice(i + 2, end), options)}</strong>`;
        i = end + 2;
        continue;
      }
    }
    html += escape(text[i]);
    i++;
  }
  return html;
}

/** Where the `**` opened before `from` closes, code spans skipped; -1 if it does not. */
function closingStrong(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    if (text[i] === '`') {
      const end = text.indexOf('`', i + 1);
      if (end < 0) return -1;
      i = end;
    } else if (text.startsWith('**', i)) {
      return i;
    }
  }
  return -1;
}

const HEADING = /^(#{1,6})\s+(.*)$/;
const FENCE = /^```(\S*)\s*$/;
const ITEM = /^- (.*)$/;

/** Whether a line starts a block of its own (it ends a paragraph). */
const startsBlock = (line: string) => HEADING.test(line) || FENCE.test(line) || line.startsWith('|') || ITEM.test(line);

/** Block Markdown as HTML (see the file's comment for the subset). */
export function renderMarkdown(markdown: string, options: MarkdownOptions): string {
  return renderBlocks(markdown.replace(/\r\n/g, '\n').split('\n'), options);
}

function renderBlocks(lines: string[], options: MarkdownOptions): string {
  const html: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      i++;
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const level = heading[1].length;
      html.push(`<h${level} id="${escape(slugOf(heading[2]))}">${renderInline(heading[2], options)}</h${level}>`);
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const body: string[] = [];
      for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i]);
      i++; // the closing fence
      const language = fence[1] ? ` class="language-${escape(fence[1])}"` : '';
      html.push(`<pre><code${language}>${escape(body.join('\n'))}</code></pre>`);
      continue;
    }
    if (line.startsWith('|')) {
      const rows: string[] = [];
      for (; i < lines.length && lines[i].startsWith('|'); i++) rows.push(lines[i]);
      html.push(renderTable(rows, options));
      continue;
    }
    if (ITEM.test(line)) {
      const items: string[][] = [];
      i = collectItems(lines, i, items);
      html.push(`<ul>\n${items.map((item) => `<li>${renderItem(item, options)}</li>\n`).join('')}</ul>`);
      continue;
    }
    const paragraph: string[] = [];
    for (; i < lines.length && lines[i].trim() && !(paragraph.length && startsBlock(lines[i])); i++) {
      paragraph.push(lines[i].trim());
    }
    html.push(`<p>${renderInline(paragraph.join(' '), options)}</p>`);
  }
  return html.join('\n');
}

/**
 * The items of a list from `start`, each as its lines without the item's marker and indent: a line indented by two
 * spaces or more belongs to the item above, and so does a blank line followed by one; a line that is neither ends the
 * list, unless it continues the item's paragraph. Returns the index after the list.
 */
function collectItems(lines: string[], start: number, items: string[][]): number {
  let i = start;
  while (i < lines.length) {
    const line = lines[i];
    const item = ITEM.exec(line);
    if (item) {
      items.push([item[1]]);
    } else if (line.startsWith('  ')) {
      items[items.length - 1].push(line.slice(2));
    } else if (!line.trim()) {
      const next = lines.slice(i + 1).find((l) => l.trim());
      if (next === undefined || !(next.startsWith('  ') || ITEM.test(next))) break;
      items[items.length - 1].push('');
    } else if (!startsBlock(line) && lines[i - 1]?.trim()) {
      items[items.length - 1].push(line); // a lazy continuation of the item's paragraph
    } else {
      break;
    }
    i++;
  }
  return i;
}

/** A tight item (one paragraph) as inline HTML; one with blocks (lists, code, tables, paragraphs) as blocks. */
function renderItem(lines: string[], options: MarkdownOptions): string {
  const paragraphOnly = lines.every((line, index) => line.trim() && (index === 0 || !startsBlock(line)));
  if (paragraphOnly) return renderInline(lines.map((line) => line.trim()).join(' '), options);
  return renderBlocks(lines, options);
}

/** `| a | b |` cells, code spans kept whole (a `|` inside one is not a border). */
function cellsOf(row: string): string[] {
  const cells: string[] = [];
  let cell = '';
  let inCode = false;
  for (const char of row.trim().replace(/^\|/, '').replace(/\|$/, '')) {
    if (char === '`') inCode = !inCode;
    if (char === '|' && !inCode) {
      cells.push(cell.trim());
      cell = '';
    } else {
      cell += char;
    }
  }
  cells.push(cell.trim());
  return cells;
}

function renderTable(rows: string[], options: MarkdownOptions): string {
  const [head, , ...body] = rows;
  const row = (cells: string[], tag: 'th' | 'td') =>
    `<tr>${cells.map((cell) => `<${tag}>${renderInline(cell, options)}</${tag}>`).join('')}</tr>`;
  return (
    `<table><thead>${row(cellsOf(head), 'th')}</thead><tbody>\n` +
    body.map((line) => `${row(cellsOf(line), 'td')}\n`).join('') +
    '</tbody></table>'
  );
}
