import { ERROR_CODES } from '../src/common/errors/error-codes';
import { TestApp } from './support/test-app';

/**
 * Issue 49, "every error documented where its link points": every error body's `documentationUrl` is
 * `/docs/errors#<code>`; the page there must explain each code (cause, what to do, an example answer), and every link
 * on it must lead somewhere this service serves, to an anchor that exists there. The links are followed on the
 * running app, as a reader's browser would.
 */
describe('GET /docs/errors (HTTP, the running app)', () => {
  let api: TestApp;
  let page: string;
  let pageUrl: URL;

  beforeAll(async () => {
    api = await TestApp.start();
    pageUrl = new URL('/docs/errors', api.baseUrl);
    const response = await fetch(pageUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    page = await response.text();
  });
  afterAll(async () => {
    await api?.close();
  });

  it.each(Object.entries(ERROR_CODES))(
    'has the entry of %s: its cause, what to do, an example answer',
    (code, [status]) => {
      const entry = new RegExp(`<section id="${code}">([\\s\\S]*?)</section>`).exec(page)?.[1] ?? '';
      expect(entry).toContain(`<h3><code>${code}</code> (${status})</h3>`);
      const cause = /<p><strong>Cause<\/strong>([\s\S]*?)<\/p>/.exec(entry)?.[1] ?? '';
      const action = /<strong>What to do<\/strong>:([\s\S]*?)<p>For example:<\/p>/.exec(entry)?.[1] ?? '';
      const example = /<pre><code class="language-json">([\s\S]*?)<\/code><\/pre>/.exec(entry)?.[1] ?? '';
      expect(cause.replace(/<[^>]+>/g, '').trim().length).toBeGreaterThan(20);
      expect(action.replace(/<[^>]+>/g, '').trim().length).toBeGreaterThan(20);
      const answer = JSON.parse(
        example
          .replace(/&quot;/g, '"')
          .replace(/&lt;/g, '<')
          .replace(/&gt;/g, '>')
          .replace(/&amp;/g, '&'),
      );
      expect(answer).toMatchObject({ code, status, documentationUrl: `/docs/errors#${code}` });
    },
  );

  it('is where every error body points: the anchor of its code', async () => {
    const refused = await api.get('/store/orders/1'); // no key
    const { documentationUrl } = refused.body as { documentationUrl: string };
    const target = new URL(documentationUrl, `${api.baseUrl}/store/orders/1`);
    expect(target.pathname).toBe('/docs/errors');
    expect(page).toContain(`id="${target.hash.slice(1)}"`);
  });

  it('links only within the service, each link to a page it serves and an anchor that page has', async () => {
    const hrefs = [...new Set([...page.matchAll(/ href="([^"]*)"/g)].map((match) => match[1].replace(/&amp;/g, '&')))];
    expect(hrefs.length).toBeGreaterThan(Object.keys(ERROR_CODES).length);
    const served = new Map<string, { status: number; body: string }>();
    const problems: string[] = [];
    for (const href of hrefs) {
      const target = new URL(href, pageUrl);
      if (target.origin !== pageUrl.origin) {
        problems.push(`${href}: outside the service`);
        continue;
      }
      const path = target.pathname + target.search;
      if (!served.has(path)) {
        const response = await fetch(new URL(path, pageUrl));
        served.set(path, { status: response.status, body: await response.text() });
      }
      const { status, body } = served.get(path)!;
      if (status !== 200) problems.push(`${href}: ${path} answers ${status}`);
      else if (target.hash && !body.includes(` id="${decodeURIComponent(target.hash.slice(1))}"`)) {
        problems.push(`${href}: no such anchor on ${path}`);
      }
    }
    expect(problems).toEqual([]);
  });
});
