import fastifyHelmet from '@fastify/helmet';
import Fastify from 'fastify';
import { API_CSP, DOCS_CSP } from '../src/common/http-kit/security-headers.hooks';
import { TestApp } from './support/test-app';

/** A Content-Security-Policy header as directive → sources. */
function parseCsp(header: string | null): Map<string, string[]> {
  const policy = new Map<string, string[]>();
  for (const part of (header ?? '').split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name) policy.set(name.toLowerCase(), sources);
  }
  return policy;
}

/** The sources a fetch directive allows, falling back to default-src as browsers do. */
function sources(policy: Map<string, string[]>, directive: string): string[] {
  return policy.get(directive) ?? policy.get('default-src') ?? [];
}

describe('response headers: no caching of API responses, helmet, and /docs still works', () => {
  let api: TestApp;

  beforeAll(async () => {
    api = await TestApp.start();
  });
  afterAll(() => api.close());

  it('sends Cache-Control: no-store on responses with a secret, on authenticated ones and on errors', async () => {
    const signUp = await api.post('/accounts', { body: { name: 'Secretive' } });
    expect(signUp.status).toBe(201);
    const key = signUp.body.apiKey.key as string;
    const newKey = await api.post('/accounts/me/api-keys', { key });
    expect(newKey.status).toBe(201);
    const me = await api.get('/accounts/me', { key });
    const refused = await api.get('/accounts/me', { key: 'psk_nonsense' });
    const probe = await api.get('/health/live');
    for (const response of [signUp, newKey, me, refused, probe]) {
      expect(response.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('sends the headers a JSON API should, from helmet', async () => {
    const response = await api.get('/health/live');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(response.headers.get('strict-transport-security')).toMatch(/^max-age=\d+/);
    expect(response.headers.get('cross-origin-resource-policy')).toBe('same-origin');
    expect(response.headers.get('x-powered-by')).toBeNull();
    const csp = parseCsp(response.headers.get('content-security-policy'));
    expect(csp.get('default-src')).toEqual(["'none'"]);
    expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
    // Errors too, including those the framework answers itself.
    const error = await api.get('/no/such/route');
    expect(error.headers.get('x-content-type-options')).toBe('nosniff');
    expect(error.headers.get('content-security-policy')).toBe(response.headers.get('content-security-policy'));
  });

  it('sends exactly the headers @fastify/helmet sends with the same options, on the API and on /docs', async () => {
    // The reference: the plugin the app used to register, computing them on every request.
    const reference = Fastify();
    await reference.register(fastifyHelmet, {
      global: true,
      contentSecurityPolicy: API_CSP,
      frameguard: { action: 'deny' },
    });
    reference.get('/api', async () => ({}));
    reference.get('/docs', { config: { helmet: { contentSecurityPolicy: DOCS_CSP } } } as object, async () => ({}));
    const own = new Set(['content-type', 'content-length', 'date', 'connection', 'keep-alive']);
    const helmetHeaders = async (path: string) => {
      const response = await reference.inject({ method: 'GET', url: path });
      return Object.fromEntries(Object.entries(response.headers).filter(([name]) => !own.has(name)));
    };
    const [forApi, forDocs] = [await helmetHeaders('/api'), await helmetHeaders('/docs')];
    await reference.close();
    expect(Object.keys(forApi).length).toBeGreaterThanOrEqual(10);
    expect(forDocs['content-security-policy']).not.toBe(forApi['content-security-policy']);

    for (const [path, expected] of [
      ['/health/live', forApi],
      ['/no/such/route', forApi],
      ['/docs', forDocs],
      ['/openapi.json', forDocs],
    ] as const) {
      const response = await fetch(`${api.baseUrl}${path}`);
      for (const [name, value] of Object.entries(expected)) {
        expect({ path, name, value: response.headers.get(name) }).toEqual({ path, name, value });
      }
    }
  });

  it('serves /docs and every script and stylesheet it loads, under a CSP that lets Swagger UI run', async () => {
    const page = await fetch(`${api.baseUrl}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    const csp = parseCsp(page.headers.get('content-security-policy'));
    expect(csp.size).toBeGreaterThan(0);

    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    const scriptUrls = scripts.map(([, attributes]) => /\ssrc="([^"]+)"/.exec(attributes)?.[1]);
    const stylesheets = [...html.matchAll(/<link[^>]*rel="stylesheet"[^>]*href="([^"]+)"/g)].map((m) => m[1]);
    expect(scriptUrls.length).toBeGreaterThanOrEqual(2);
    expect(stylesheets.length).toBeGreaterThanOrEqual(1);

    // Inline scripts would need 'unsafe-inline', a nonce or a hash: there are none, and none is allowed.
    expect(scriptUrls.every((src) => src !== undefined)).toBe(true);
    const scriptSources = sources(csp, 'script-src');
    expect(scriptSources).toContain("'self'");
    expect(scriptSources).not.toContain("'unsafe-inline'");
    // The page's own <style> blocks and Swagger UI's style attributes.
    if (/<style[\s>]/.test(html)) expect(sources(csp, 'style-src')).toContain("'unsafe-inline'");
    expect(sources(csp, 'style-src')).toContain("'self'");
    // Swagger UI fetches the description and, with "Try it out", the API: same origin.
    expect(sources(csp, 'connect-src')).toContain("'self'");
    expect(sources(csp, 'img-src')).toEqual(expect.arrayContaining(["'self'", 'data:']));

    const base = new URL('/docs', api.baseUrl);
    for (const [url, type] of [
      ...scriptUrls.map((src) => [src as string, /javascript/] as const),
      ...stylesheets.map((href) => [href, /^text\/css/] as const),
    ]) {
      const asset = new URL(url, base);
      expect(asset.origin).toBe(base.origin); // allowed by 'self'
      const response = await fetch(asset);
      expect({ url: asset.pathname, status: response.status }).toEqual({ url: asset.pathname, status: 200 });
      expect(response.headers.get('content-type')).toMatch(type);
      expect((await response.text()).length).toBeGreaterThan(0);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });
});
