import { ERROR_CODES, type PublicErrorCode } from './error-codes';
import { apiGuide, errorDocsPage, errorEntriesOf } from './error-docs';
import { renderMarkdown, slugOf } from './guide-markdown';

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

  it('renders the subset the guide uses: headings, lists with blocks, tables, code, links kept or reduced', () => {
    const markdown = [
      '## Rate limits',
      '',
      'A **bold** `code*` and [a link](#rate-limits), [out](operations.md#x).',
      '',
      '- **One.** first',
      '  continued',
      '- Two:',
      '',
      '  | a | b |',
      '  |---|---|',
      '  | `x|y` | 2 |',
      '',
      '  ```json',
      '  {"a": "<b>"}',
      '  ```',
      '  - nested',
      '',
      'After.',
    ].join('\n');
    const html = renderMarkdown(markdown, { linkTo: (href) => (href.startsWith('#') ? href : null) });
    expect(html).toBe(
      [
        '<h2 id="rate-limits">Rate limits</h2>',
        '<p>A <strong>bold</strong> <code>code*</code> and <a href="#rate-limits">a link</a>, out.</p>',
        '<ul>',
        '<li><strong>One.</strong> first continued</li>',
        '<li><p>Two:</p>',
        '<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody>',
        '<tr><td><code>x|y</code></td><td>2</td></tr>',
        '</tbody></table>',
        '<pre><code class="language-json">{&quot;a&quot;: &quot;&lt;b&gt;&quot;}</code></pre>',
        '<ul>',
        '<li>nested</li>',
        '</ul></li>',
        '</ul>',
        '<p>After.</p>',
      ].join('\n'),
    );
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
