import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { Client } from 'pg';
import { createRootLogger } from '../src/common/logging/logging';
import { StoreFixtures } from './support/store-fixtures';
import { ADMIN_KEY, TestApp, expectError } from './support/test-app';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** Writes `chunks` on a raw socket (`pauseMs` after each, until an answer comes); reads until the server closes. */
function rawRequest(baseUrl: string, chunks: string[], pauseMs = 0): Promise<RawResponse> {
  const { port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    let data = '';
    const socket = connect(Number(port), '127.0.0.1', async () => {
      for (const chunk of chunks) {
        if (data || socket.destroyed) break; // answered: the rest is not read
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

/** Every line the app logs, parsed. */
class LogCapture extends Writable {
  readonly entries: Array<Record<string, any>> = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) this.entries.push(JSON.parse(line));
    done();
  }
  /** The lines about one request: its access line, and those naming it. */
  linesOf(requestId: string | null | undefined): Array<Record<string, any>> {
    return this.entries.filter((entry) => entry['requestId'] === requestId || entry['msg']?.includes(requestId));
  }
}

/** The security headers every answer carries (security-headers.e2e has the full set). */
function expectDressed(response: RawResponse): void {
  expect(response.headers['cache-control']).toBe('no-store');
  expect(response.headers['x-content-type-options']).toBe('nosniff');
  expect(response.headers['x-frame-options']).toBe('DENY');
  expect(response.headers['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none'");
  expect(response.headers['strict-transport-security']).toMatch(/^max-age=/);
  expect(response.headers['referrer-policy']).toBe('no-referrer');
}

const get = (path: string) => [`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`];

function expectFrameworkError(response: RawResponse, status: number, code: string): void {
  expect(response.status).toBe(status);
  expect(response.body).toEqual(
    expect.objectContaining({ code, status, message: expect.any(String), documentationUrl: `/docs/errors#${code}` }),
  );
  expect(Object.keys(response.body as object).sort()).toEqual(
    (response.body as { details?: unknown }).details
      ? ['code', 'details', 'documentationUrl', 'message', 'status']
      : ['code', 'documentationUrl', 'message', 'status'],
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

  it('a URL that is not valid percent-encoding (GET /%), with the security headers', async () => {
    expectFrameworkError(await rawRequest(api.baseUrl, get('/%')), 400, 'bad_request');
    const response = await rawRequest(api.baseUrl, get('/pets/%zz'));
    expectFrameworkError(response, 400, 'bad_request');
    expectDressed(response);
  });

  it('a body that is not JSON (missing_content_type), with the security headers', async () => {
    const request = 'POST /accounts HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 6\r\n';
    const response = await rawRequest(api.baseUrl, [`${request}Connection: close\r\n\r\nname=x`]);
    expectFrameworkError(response, 400, 'missing_content_type');
    expectDressed(response);
  });

  it('an HTTP/1.1 request without Host (RFC 9112: 400), in the Error shape with the security headers', async () => {
    const response = await rawRequest(api.baseUrl, ['GET /health/live HTTP/1.1\r\nConnection: close\r\n\r\n']);
    expectFrameworkError(response, 400, 'bad_request');
    expect((response.body as { message: string }).message).toMatch(/Host/);
    expectDressed(response);
    // HTTP/1.0 has no Host requirement.
    const old = await rawRequest(api.baseUrl, ['GET /health/live HTTP/1.0\r\n\r\n']);
    expect(old.status).toBe(200);
  });

  it("what Node's parser refuses carries the security headers too", async () => {
    const response = await rawRequest(api.baseUrl, ['FOO /pets HTTP/1.1\r\nHost: x\r\n\r\n']);
    expectFrameworkError(response, 400, 'bad_request');
    expectDressed(response);
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

describe('a body still arriving when the handler deadline passes (request timeout = handler timeout)', () => {
  const capture = new LogCapture();
  let api: TestApp;

  beforeAll(async () => {
    const logger = createRootLogger({ logLevel: 'info', logFormat: 'json' }, capture);
    api = await TestApp.start({ http: { requestTimeoutMs: 1000, handlerTimeoutMs: 1000 } }, { logger });
  });
  afterAll(() => api.close());

  it('is 408 request_timeout, logged as what happened, with no error line', async () => {
    const head = 'POST /accounts?x=1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n';
    const started = Date.now();
    // The body trickles in, a byte every 100 ms, past both deadlines.
    const trickle = Array.from({ length: 25 }, () => ' ');
    const response = await rawRequest(api.baseUrl, [`${head}\r\n{"name":`, ...trickle], 100);
    expect(Date.now() - started).toBeLessThan(2500);
    expectFrameworkError(response, 408, 'request_timeout');
    expectDressed(response);
    expect(response.headers['connection']).toBe('close');
    await new Promise((resolve) => setTimeout(resolve, 1500)); // Node's own request-timeout check comes and goes
    const lines = capture.linesOf(response.headers['x-request-id']);
    expect(lines.filter((line) => line['level'] === 'error')).toEqual([]);
    expect(JSON.stringify(capture.entries)).not.toMatch(/Database unavailable|Unexpected error/);
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 'info', msg: expect.stringMatching(/body not received within 1000 ms/) }),
    );
    expect(lines).toContainEqual(expect.objectContaining({ route: '/accounts', status: 408 }));
    expect(JSON.stringify(lines)).not.toContain('x=1');
  });
});

describe('a request not answered within HTTP_HANDLER_TIMEOUT_MS', () => {
  let api: TestApp;
  let store: StoreFixtures;

  const capture = new LogCapture();

  beforeAll(async () => {
    const logger = createRootLogger({ logLevel: 'info', logFormat: 'json' }, capture);
    // 2 s: the first writes (a key verified, a block of ids, a catalogue event) must not meet it on a loaded host
    // (CI met 500 ms once creating the fixtures' category); the requests under a held lock still do, a moment later.
    api = await TestApp.start({ http: { handlerTimeoutMs: 2000 } }, { logger });
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

  it('logs the route template, not the URL with its ids and query, and not as a database failure', async () => {
    const holder = new Client({ connectionString: api.databaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE stock IN ACCESS EXCLUSIVE MODE');
      const response = await api.get('/store/inventory?limit=7', { key: ADMIN_KEY });
      expectError(response, 503, 'service_unavailable');
      await new Promise((resolve) => setTimeout(resolve, 50));
      const lines = capture.linesOf(response.headers.get('x-request-id'));
      expect(lines).toContainEqual(
        expect.objectContaining({
          level: 'warn',
          msg: expect.stringMatching(/^Handler timeout on GET \/store\/inventory \(request [^)]+\): not answered/),
        }),
      );
      expect(JSON.stringify(lines)).not.toMatch(/limit=7|Database unavailable/);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
  });
});
