import { connect } from 'node:net';
import { Client } from 'pg';
import { StoreFixtures } from './support/store-fixtures';
import { ADMIN_KEY, TestApp, expectError } from './support/test-app';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** Writes `chunks` on a raw socket (waiting `pauseMs` after each) and reads the response until the server closes. */
function rawRequest(baseUrl: string, chunks: string[], pauseMs = 0): Promise<RawResponse> {
  const { port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    let data = '';
    const socket = connect(Number(port), '127.0.0.1', async () => {
      for (const chunk of chunks) {
        socket.write(chunk);
        if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
      }
    });
    socket.on('data', (chunk) => (data += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, ...rest] = data.split('\r\n\r\n');
      const [statusLine, ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      const text = rest.join('\r\n\r\n');
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: text ? JSON.parse(text) : undefined });
    });
  });
}

const get = (path: string) => [`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`];

function expectFrameworkError(response: RawResponse, status: number, code: string): void {
  expect(response.status).toBe(status);
  expect(response.body).toEqual(expect.objectContaining({ code, status, message: expect.any(String) }));
  expect(Object.keys(response.body as object).sort()).toEqual(
    (response.body as { details?: unknown }).details
      ? ['code', 'details', 'message', 'status']
      : ['code', 'message', 'status'],
  );
  expect(JSON.stringify(response.body)).not.toMatch(/FST_|fastify|statusCode/i);
  expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
}

describe('responses the framework produces itself are in the Error shape, with a request id', () => {
  let api: TestApp;

  beforeAll(async () => {
    api = await TestApp.start({ http: { headersTimeoutMs: 500, requestTimeoutMs: 1000 } });
  });
  afterAll(() => api.close());

  it('a URL that is not valid percent-encoding (GET /%)', async () => {
    expectFrameworkError(await rawRequest(api.baseUrl, get('/%')), 400, 'bad_request');
    expectFrameworkError(await rawRequest(api.baseUrl, get('/pets/%zz')), 400, 'bad_request');
  });

  it('a path parameter longer than the router takes', async () => {
    const response = await rawRequest(api.baseUrl, get(`/pets/${'1'.repeat(200)}`));
    expectFrameworkError(response, 400, 'validation_failed');
  });

  it('a method Node does not know, and malformed framing', async () => {
    expectFrameworkError(await rawRequest(api.baseUrl, ['FOO /pets HTTP/1.1\r\nHost: x\r\n\r\n']), 400, 'bad_request');
    const framing =
      'GET /health/live HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n';
    expectFrameworkError(await rawRequest(api.baseUrl, [framing]), 400, 'bad_request');
  });

  it('headers that do not arrive within HTTP_HEADERS_TIMEOUT_MS', async () => {
    const response = await rawRequest(api.baseUrl, ['GET /health/live HTTP/1.1\r\nHost: x\r\n']);
    expectFrameworkError(response, 408, 'request_timeout');
  });

  it('a body that does not arrive within HTTP_REQUEST_TIMEOUT_MS', async () => {
    const head = 'POST /accounts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n';
    const response = await rawRequest(api.baseUrl, [head, '{"na'], 200);
    expectFrameworkError(response, 408, 'request_timeout');
  });

  it('an unknown route keeps the shape and the id (unchanged)', async () => {
    const response = await api.get('/no/such/route');
    expectError(response, 404, 'not_found');
    expect(response.headers.get('x-request-id')).toBeTruthy();
  });
});

describe('a request not answered within HTTP_HANDLER_TIMEOUT_MS', () => {
  let api: TestApp;
  let store: StoreFixtures;

  beforeAll(async () => {
    api = await TestApp.start({ http: { handlerTimeoutMs: 500 } });
    store = await StoreFixtures.on(api);
  });
  afterAll(async () => {
    await store.close();
    await api.close();
  });

  it('gets 503 service_unavailable with Retry-After, while a lock holds its statement', async () => {
    const petId = await store.pet({ quantity: 3 });
    const holder = new Client({ connectionString: api.databaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM stock WHERE pet_id = $1 FOR UPDATE', [petId]);
      const response = await api.put(`/store/inventory/${petId}`, { key: ADMIN_KEY, body: { quantity: 5 } });
      expectError(response, 503, 'service_unavailable');
      expect(response.headers.get('retry-after')).toBe('5');
      expect(response.headers.get('x-request-id')).toBeTruthy();
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
  });
});
