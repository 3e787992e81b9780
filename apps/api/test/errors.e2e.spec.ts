import { ADMIN_KEY, TestApp, expectError } from './support/test-app';

describe('the Error shape from every layer (HTTP, real PostgreSQL)', () => {
  let api: TestApp;

  beforeAll(async () => {
    api = await TestApp.start();
  });
  afterAll(() => api.close());

  const post = (raw: string | undefined, headers: Record<string, string>) =>
    api.post('/categories', { key: ADMIN_KEY, raw, headers });

  it.each([
    ['truncated JSON', '{"name":'],
    ['not JSON at all', 'name=Dogs'],
    ['a trailing comma', '{"name":"Dogs",}'],
  ])('answers %s with 400 invalid_json', async (_, raw) => {
    expectError(await post(raw, { 'content-type': 'application/json' }), 400, 'invalid_json');
  });

  it('answers an empty JSON body with 400 invalid_json', async () => {
    expectError(await post('', { 'content-type': 'application/json', 'content-length': '0' }), 400, 'invalid_json');
  });

  it.each([
    ['no Content-Type', {}],
    ['text/plain', { 'content-type': 'text/plain' }],
    ['form data', { 'content-type': 'application/x-www-form-urlencoded' }],
  ])('answers a body with %s with 400 missing_content_type', async (_, headers) => {
    expectError(await post('{"name":"Dogs"}', headers as Record<string, string>), 400, 'missing_content_type');
  });

  it('accepts application/json with a charset', async () => {
    const response = await post('{"name":"Charset"}', { 'content-type': 'application/json; charset=utf-8' });
    expect(response.status).toBe(201);
  });

  it('answers a body over 64 KiB with 413 payload_too_large and creates nothing', async () => {
    const response = await post(JSON.stringify({ name: 'Big', description: 'x'.repeat(70 * 1024) }), {
      'content-type': 'application/json',
    });
    expectError(response, 413, 'payload_too_large');
    const list = await api.get('/categories', { key: ADMIN_KEY });
    expect(list.body.map((c: { name: string }) => c.name)).not.toContain('Big');
  });

  it('answers an unknown route with 404 not_found, and another method on a known one with 405 (issue 13)', async () => {
    expectError(await api.get('/no/such/route', { key: ADMIN_KEY }), 404, 'not_found');
    const wrongMethod = await api.request('PUT', '/categories', { key: ADMIN_KEY, body: {} });
    expectError(wrongMethod, 405, 'method_not_allowed');
    expect(wrongMethod.headers.get('allow')).toBe('GET, HEAD, POST, OPTIONS');
  });

  it("links every error to its code's entry in the served list of codes, which is public", async () => {
    const refused = await api.get('/events', {});
    expectError(refused, 401, 'unauthorized');
    const page = await fetch(new URL(refused.body.documentationUrl, api.baseUrl));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    const { ERROR_CODES } = await import('../src/common/errors/error-codes');
    for (const code of Object.keys(ERROR_CODES)) expect(html).toContain(`id="${code}"`);
  });

  it('never leaks framework text: messages are ours', async () => {
    const response = await post('{"name":', { 'content-type': 'application/json' });
    expect(JSON.stringify(response.body)).not.toMatch(/fastify|FST_|SyntaxError|stack|at \//i);
  });

  it('sends X-Request-Id on every response, echoing a sane one and replacing an unsafe one', async () => {
    const echoed = await api.get('/health/live', { headers: { 'x-request-id': 'abc-123' } });
    expect(echoed.headers.get('x-request-id')).toBe('abc-123');
    const replaced = await api.get('/health/live', { headers: { 'x-request-id': 'bad id <script>' } });
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const error = await api.get('/nope');
    expect(error.headers.get('x-request-id')).toBeTruthy();
  });
});

describe('malformed HTTP (raw socket)', () => {
  let api: TestApp;

  beforeAll(async () => {
    api = await TestApp.start();
  });
  afterAll(() => api.close());

  it('answers what the HTTP parser rejects with the Error shape', async () => {
    const { connect } = await import('node:net');
    const { port } = new URL(api.baseUrl);
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(
          'GET /health/live HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
        );
      });
      let data = '';
      socket.on('data', (chunk) => (data += chunk));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });
    const [head, body] = raw.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(body)).toEqual({
      code: 'bad_request',
      message: expect.any(String),
      status: 400,
      documentationUrl: '/docs/errors#bad_request',
    });
  });
});
