import MarkdownIt from 'markdown-it';

/** A token of markdown-it's stream (named through the API: its type exports differ between ESM and CommonJS). */
type Markdown = InstanceType<typeof MarkdownIt>;
type Token = ReturnType<Markdown['parse']>[number];

/**
 * The Markdown of docs/api.md as HTML, for the pages the service serves from it (`/docs/errors`), by markdown-it
 * (CommonMark with GitHub's tables). What is ours is the page's policy on top of it:
 *
 * - each heading gets the anchor GitHub gives it (`slugOf`), so the guide's own `#links` land on the page;
 * - a link is kept only where `linkTo` says it leads somewhere the page can reach; any other is its text alone;
 * - no raw HTML passes (`html: false`: it is escaped as text), and no bare address becomes a link (`linkify: false`).
 */

export interface MarkdownOptions {
  /** The `href` a link of the guide gets on the page, or null to render its text alone. */
  linkTo(href: string): string | null;
}

/** The anchor GitHub gives a heading: lower case, without punctuation but `-` and `_`, spaces as `-`. */
export function slugOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The text a heading's inline tokens show (code spans' content included, Markdown marks not). */
function textOf(inline: Token): string {
  return (inline.children ?? [])
    .map((child) => (child.type === 'text' || child.type === 'code_inline' ? child.content : ''))
    .join('');
}

/**
 * Each link of an inline run: rewritten to where `linkTo` sends it, or hidden (its text stays) where it leads
 * nowhere the page reaches. A hidden token renders as nothing in markdown-it's default `renderToken`.
 */
function rewriteLinks(children: Token[], options: MarkdownOptions): void {
  const open: Token[] = [];
  for (const token of children) {
    if (token.type === 'link_open') {
      const href = options.linkTo(String(token.attrGet('href') ?? ''));
      if (href === null) token.hidden = true;
      else token.attrSet('href', href);
      open.push(token);
    } else if (token.type === 'link_close') {
      token.hidden = open.pop()?.hidden ?? false;
    }
  }
}

function parser(options: MarkdownOptions): Markdown {
  const md = new MarkdownIt('default', { html: false, linkify: false, typographer: false });
  md.core.ruler.push('petstore_guide', (state) => {
    state.tokens.forEach((token, index) => {
      if (token.type === 'heading_open') token.attrSet('id', slugOf(textOf(state.tokens[index + 1])));
      if (token.type === 'inline' && token.children) rewriteLinks(token.children, options);
    });
  });
  return md;
}

/** Block Markdown as HTML: headings with their anchors, paragraphs, lists, code blocks, tables. */
export function renderMarkdown(markdown: string, options: MarkdownOptions): string {
  return parser(options).render(markdown).trimEnd();
}

/** Inline Markdown as HTML (a table cell, a sentence): code spans, emphasis, links as `linkTo` decides. */
export function renderInline(text: string, options: MarkdownOptions): string {
  return parser(options).renderInline(text);
}
