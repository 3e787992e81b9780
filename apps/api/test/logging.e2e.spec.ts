import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { createRootLogger, registerAccessLog } from '../src/common/logging/logging';
import { ADMIN_KEY, TestApp } from './support/test-app';

/** Every line the app logs, as written (JSON text) and parsed. */
class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  }
  get entries(): Array<Record<string, any>> {
    return this.lines.map((line) => JSON.parse(line));
  }
  /** The request line of the response that carried this X-Request-Id. */
  requestLine(requestId: string | null): Record<string, any> {
    const found = this.entries.filter(
      (entry) => entry['msg']?.startsWith('request ') && entry['requestId'] === requestId,
    );
    if (found.length !== 1) throw new Error(`expected one request line for ${requestId}, found ${found.length}`);
    return found[0];
  }
}

/** The request line is written when the response ends: give the 'finish' event a moment. */
const flushed = () => new Promise((resolve) => setTimeout(resolve, 50));

describe('logs: one JSON line per request, nothing secret (HTTP, real PostgreSQL)', () => {
  const capture = new LogCapture();
  const logger = createRootLogger({ logLevel: 'info', logFormat: 'json' }, capture);
  let api: TestApp;

  beforeAll(async () => {
    api = await TestApp.start({}, { logger });
  });
  afterAll(() => api.close());

  it('writes time, level, request id, method, route template, status, duration and account id', async () => {
    const { key, id } = await api.customer('Logged');
    const response = await api.get('/pets/987654', { key, headers: { 'x-request-id': 'trace-me-123' } });
    expect(response.status).toBe(404);
    await flushed();
    const line = capture.requestLine('trace-me-123');
    expect(line).toEqual(
      expect.objectContaining({
        level: 'info',
        time: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        requestId: 'trace-me-123',
        method: 'GET',
        route: '/pets/:petId',
        status: 404,
        durationMs: expect.any(Number),
        accountId: id,
        msg: 'request completed',
      }),
    );
    // The route is the template: the id requested appears nowhere in the line.
    expect(JSON.stringify(line)).not.toContain('987654');
  });

  it('uses the generated request id sent back in X-Request-Id, and has no account without a key', async () => {
    const response = await api.get('/categories');
    expect(response.status).toBe(401);
    await flushed();
    const line = capture.requestLine(response.headers.get('x-request-id'));
    expect(line).toEqual(expect.objectContaining({ method: 'GET', route: '/categories', status: 401 }));
    expect(line).not.toHaveProperty('accountId');
  });

  it('labels a request that matched no route with a fixed route, not its URL', async () => {
    const response = await api.get('/no/such/thing/42');
    await flushed();
    const line = capture.requestLine(response.headers.get('x-request-id'));
    expect(line).toEqual(expect.objectContaining({ route: '(unmatched)', status: 404 }));
  });

  it('logs a request refused before any handler (a body that is not JSON)', async () => {
    const response = await api.request('POST', '/accounts', {
      raw: 'name=x',
      headers: { 'content-type': 'text/plain' },
    });
    expect(response.status).toBe(400);
    await flushed();
    const line = capture.requestLine(response.headers.get('x-request-id'));
    expect(line).toEqual(expect.objectContaining({ method: 'POST', route: '/accounts', status: 400 }));
  });

  it('never logs an API key, the Authorization header, cookies or bodies', async () => {
    const signUp = await api.post('/accounts', { body: { name: 'Secretive' } });
    const key: string = signUp.body.apiKey.key;
    const created = await api.post('/accounts/me/api-keys', { key, body: {} });
    const newKey: string = created.body.key;
    expect(newKey).toMatch(/^psk_/);
    await api.get('/accounts/me', { key, headers: { cookie: 'session=cookie-secret-value' } });
    await api.get('/categories', { key: ADMIN_KEY });
    await flushed();
    const text = capture.lines.join('\n');
    for (const secret of [key, newKey, ADMIN_KEY, 'cookie-secret-value', 'Bearer', 'Secretive']) {
      if (secret) expect(text).not.toContain(secret);
    }
    expect(capture.requestLine(signUp.headers.get('x-request-id'))).toEqual(
      expect.objectContaining({ method: 'POST', route: '/accounts', status: 201 }),
    );
  });

  it('redacts secret-bearing fields wherever a log call puts them', () => {
    const sink = new LogCapture();
    const logger = createRootLogger({ logLevel: 'info', logFormat: 'json' }, sink);
    logger.info({
      headers: { authorization: 'Bearer psk_x', cookie: 'c=1' },
      apiKey: { key: 'psk_y' },
      body: { key: 'z' },
    });
    logger.info({ request: { headers: { authorization: 'Bearer psk_w' } }, account: { key: 'psk_v' } });
    expect(sink.lines.join('\n')).not.toMatch(/psk_|c=1|"z"/);
    expect(sink.entries[0]).toEqual(
      expect.objectContaining({ headers: { authorization: '[redacted]', cookie: '[redacted]' } }),
    );
  });

  it('makes no child logger per request: the access line and in-request lines come from the one logger', async () => {
    const child = jest.spyOn(logger, 'child');
    try {
      const { key } = await api.customer('No children');
      await Promise.all([api.get('/categories', { key }), api.get('/pets?status=available', { key })]);
      await api.post('/messages', { key, body: { message: 'hello' } });
      await flushed();
      expect(child).not.toHaveBeenCalled();
    } finally {
      child.mockRestore();
    }
  });

  it('gives a line logged while a request is served its request id, and one logged outside none', async () => {
    const sink = new LogCapture();
    const unitLogger = createRootLogger({ logLevel: 'info', logFormat: 'json' }, sink);
    const fastify = Fastify({ genReqId: () => `unit-${sink.lines.length}` });
    registerAccessLog(fastify, unitLogger);
    fastify.post('/things/:id', async (request) => {
      await new Promise((resolve) => setTimeout(resolve, 5)); // across an await, with a parsed body
      unitLogger.info({ req: { headers: { authorization: 'Bearer psk_secret' } } }, 'inside');
      return { id: (request.params as { id: string }).id };
    });
    fastify.get('/boom', async () => {
      throw new Error('boom');
    });
    try {
      const answer = await fastify.inject({
        method: 'POST',
        url: '/things/7?x=1',
        payload: { big: 'x'.repeat(70_000) },
      });
      expect(answer.statusCode).toBe(200);
      expect((await fastify.inject({ method: 'GET', url: '/boom' })).statusCode).toBe(500);
      unitLogger.info('outside');
      const [inside, accessLine, failed, outside] = sink.entries;
      expect(inside).toEqual(
        expect.objectContaining({
          requestId: 'unit-0',
          msg: 'inside',
          req: { headers: { authorization: '[redacted]' } },
        }),
      );
      expect(accessLine).toEqual({
        level: 'info',
        time: expect.any(String),
        pid: process.pid,
        requestId: 'unit-0',
        method: 'POST',
        route: '/things/:id',
        status: 200,
        durationMs: expect.any(Number),
        msg: 'request completed',
      });
      expect(failed).toEqual(expect.objectContaining({ level: 'error', status: 500, msg: 'request failed' }));
      expect(outside).not.toHaveProperty('requestId');
      expect(sink.lines.join('\n')).not.toContain('7?x=1');
    } finally {
      await fastify.close();
    }
  });
});
