import { ERROR_CODES, type PublicErrorCode } from './error-codes';
import { apiGuide, errorDocsPage, errorEntriesOf } from './error-docs';
import { renderInline, renderMarkdown, slugOf } from './guide-markdown';

const codes = Object.keys(ERROR_CODES) as PublicErrorCode[];

/**
 * Issue 49, "every error documented where its link points": each code's entry in docs/api.md explains itself (why it
 * comes, what to do, an example answer in the Error shape), and the page served at /docs/errors holds no link that
 * leads out of the service or nowhere. apps/api/test/error-docs.e2e.spec.ts follows every link of the served page.
 */
describe("docs/api.md's entry of each error code", () => {
  const entries = errorEntriesOf(apiGuide());

  it.each(codes)('%s: a cause, what to do, and an example answer in the Error shape', (code) => {
    const entry = entries.get(code);
    expect({ code, entry: !!entry }).toEqual({ code, entry: true });
    const { cause, action, example } = entry!;
    const [status] = ERROR_CODES[code];
    expect(cause).toMatch(new RegExp(`^\\(${status}[,)].{20,}`, 's'));
    expect(action.length).toBeGreaterThan(20);
    const answer = JSON.parse(example) as Record<string, unknown>;
    expect(answer).toEqual({
      code,
      status,
      message: expect.stringMatching(/\S.{10,}/),
      documentationUrl: `/docs/errors#${code}`,
      ...(answer['details'] === undefined ? {} : { details: expect.any(Array) }),
    });
  });

  it('has no entry for a code the service does not answer', () => {
    expect([...entries.keys()].filter((code) => !codes.includes(code as PublicErrorCode))).toEqual([]);
  });
});

describe('the page of error codes (/docs/errors)', () => {
  const page = errorDocsPage();
  const ids = [...page.matchAll(/ id="([^"]+)"/g)].map((match) => match[1]);
  const text = page.replace(/<pre>[\s\S]*?<\/pre>/g, '');

  it('anchors each code once, and each of its other anchors once', () => {
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
    expect(ids).toEqual(expect.arrayContaining(codes));
  });

  it('links only to its own anchors, the API reference and the description', () => {
    const hrefs = [...new Set([...page.matchAll(/ href="([^"]*)"/g)].map((match) => match[1]))];
    expect(hrefs.filter((href) => !(href.startsWith('#') && ids.includes(href.slice(1))))).toEqual([
      '/docs',
      '/openapi.json',
    ]);
    // The guide's sections the entries send readers to are on the page.
    expect(ids).toEqual(
      expect.arrayContaining(['authentication-and-keys', 'scopes-and-expiry', 'idempotency', 'rate-limits']),
    );
  });

  it('sends readers elsewhere ("see …") only with a link, and leaves no Markdown behind', () => {
    // "see below", "see Configuration", "see *New endpoints*": a reference the reader of this page could not follow.
    expect(text.match(/\b[Ss]ee (?!<a href=)(?:below|above|[A-Z*])[^.;)]{0,40}/g) ?? []).toEqual([]);
    expect(text).not.toMatch(/\]\(|\*\*|<script|<style/);
  });
});

describe('the Markdown of the guide as HTML', () => {
  const keep = { linkTo: (href: string) => href };

  // The Markdown itself is markdown-it's; what is tested here is the page's policy on top of it.
  const anchorsOnly = { linkTo: (href: string) => (href.startsWith('#') ? href : null) };

  it("gives each heading GitHub's anchor, a code span's text included", () => {
    const html = renderMarkdown('## Rate limits\n\n### `insufficient_stock` (409)', anchorsOnly);
    expect(html).toContain('<h2 id="rate-limits">Rate limits</h2>');
    expect(html).toContain('<h3 id="insufficient_stock-409"><code>insufficient_stock</code> (409)</h3>');
  });

  it('keeps a link linkTo allows, reduces any other to its text', () => {
    const html = renderMarkdown('A [link](#rate-limits) and [out **there**](operations.md#x), end.', anchorsOnly);
    expect(html).toBe('<p>A <a href="#rate-limits">link</a> and out <strong>there</strong>, end.</p>');
    expect(renderInline('[the reference](/docs)', { linkTo: () => '/docs#top' })).toBe(
      '<a href="/docs#top">the reference</a>',
    );
  });

  it('lets no raw HTML through, in text or in code', () => {
    const html = renderMarkdown('<script>alert(1)</script> x\n\n```json\n{"a": "<b>"}\n```', anchorsOnly);
    expect(html).not.toMatch(/<script|<b>/);
    expect(html).toContain('&lt;script&gt;');
    expect(html).toContain('<pre><code class="language-json">{&quot;a&quot;: &quot;&lt;b&gt;&quot;}');
  });

  it("renders the guide's blocks: lists holding tables and nested lists, tables", () => {
    const markdown = ['- Two:', '', '  | a | b |', '  |---|---|', '  | `x` | 2 |', '  - nested'].join('\n');
    const html = renderMarkdown(markdown, anchorsOnly).replace(/\n/g, '');
    expect(html).toMatch(/^<ul><li><p>Two:<\/p><table><thead><tr><th>a<\/th><th>b<\/th><\/tr><\/thead>/);
    expect(html).toContain('<td><code>x</code></td><td>2</td>');
    expect(html).toMatch(/<\/table><ul><li>nested<\/li><\/ul><\/li><\/ul>$/);
  });

  it('gives headings the anchors GitHub gives them', () => {
    expect(slugOf('HTTP behaviour')).toBe('http-behaviour');
    expect(slugOf('`insufficient_stock`')).toBe('insufficient_stock');
    expect(slugOf('Recovering after an outage')).toBe('recovering-after-an-outage');
  });

  it('renders the whole guide with no Markdown left outside its code blocks', () => {
    const html = renderMarkdown(apiGuide(), keep).replace(/<pre>[\s\S]*?<\/pre>/g, '');
    expect(html).not.toMatch(/\]\(|\*\*|^\s*\|/m);
    expect(html).not.toMatch(/^- /m);
  });
});
