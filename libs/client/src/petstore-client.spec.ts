import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ClientErrorCode, ErrorCode, KnownErrorCode, OperationErrorCode } from './error-codes';
import type { components } from './generated/schema';
import {
  createPetstoreClient,
  PetstoreApiError,
  PetstoreConnectionError,
  retryAfterMs,
  unwrap,
  type CachedPage,
} from './petstore-client';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}
type Answer = { status: number; headers?: Record<string, string>; body?: unknown };

/** A local HTTP server that answers from a script and records what it received. */
class ScriptedServer {
  private constructor(
    private readonly server: Server,
    readonly baseUrl: string,
    readonly seen: Seen[],
  ) {}

  static async start(answer: (request: Seen, index: number) => Answer): Promise<ScriptedServer> {
    const seen: Seen[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
        seen.push(request);
        const { status, headers, body: payload } = answer(request, seen.length - 1);
        res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req-${seen.length}`, ...headers });
        res.end(payload === undefined ? undefined : JSON.stringify(payload));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new ScriptedServer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const MESSAGE = { id: 'm-1', message: 'hi', status: 'queued', createdAt: '2026-11-23T10:00:00.000Z' };
const error = (status: number, code: string) => ({ status, body: { code, message: `${code} happened`, status } });

describe('the Petstore client', () => {
  let server: ScriptedServer | undefined;
  afterEach(() => server?.close());

  it('retries a 429 after its Retry-After, with the same Idempotency-Key, then returns the typed body', async () => {
    server = await ScriptedServer.start((_, index) =>
      index === 0 ? { ...error(429, 'rate_limited'), headers: { 'retry-after': '2' } } : { status: 202, body: MESSAGE },
    );
    const delays: number[] = [];
    const api = createPetstoreClient({
      baseUrl: server.baseUrl,
      apiKey: 'psk_test',
      sleep: async (ms) => void delays.push(ms),
    });
    const message = await unwrap(api.POST('/messages', { body: { message: 'hi' } }));
    expect(message).toEqual(MESSAGE);
    expect(delays).toEqual([2000]);
    expect(server.seen.map((s) => [s.method, s.url, s.body])).toEqual([
      ['POST', '/messages', '{"message":"hi"}'],
      ['POST', '/messages', '{"message":"hi"}'],
    ]);
    const [first, second] = server.seen.map((s) => s.headers['idempotency-key']);
    expect(first).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(second).toBe(first);
    expect(server.seen.map((s) => s.headers.authorization)).toEqual(['Bearer psk_test', 'Bearer psk_test']);
  });

  it('retries a 503 at most `retries` times, then rejects with the typed error of the last answer', async () => {
    server = await ScriptedServer.start(() => ({
      ...error(503, 'service_unavailable'),
      headers: { 'retry-after': '1' },
    }));
    const delays: number[] = [];
    const api = createPetstoreClient({
      baseUrl: server.baseUrl,
      retries: 2,
      sleep: async (ms) => void delays.push(ms),
    });
    const failure = await api.GET('/categories').catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(PetstoreApiError);
    expect(failure).toMatchObject({
      status: 503,
      code: 'service_unavailable',
      requestId: 'req-3',
      message: 'service_unavailable happened',
    });
    expect(delays).toEqual([1000, 1000]);
    expect(server.seen).toHaveLength(3);
  });

  it('retries a 503 outcome_unknown only with its Idempotency-Key (a POST), not a write without one', async () => {
    server = await ScriptedServer.start(() => ({ ...error(503, 'outcome_unknown'), headers: { 'retry-after': '1' } }));
    const delays: number[] = [];
    const api = createPetstoreClient({
      baseUrl: server.baseUrl,
      retries: 1,
      sleep: async (ms) => void delays.push(ms),
    });
    await expect(
      api.PUT('/store/inventory/{petId}', { params: { path: { petId: 1 } }, body: { quantity: 5 } }),
    ).rejects.toMatchObject({ status: 503, code: 'outcome_unknown' });
    expect(server.seen).toHaveLength(1);
    await expect(api.POST('/messages', { body: { message: 'hi' } })).rejects.toMatchObject({ code: 'outcome_unknown' });
    expect(server.seen).toHaveLength(3);
    const [first, second] = server.seen.slice(1).map((s) => s.headers['idempotency-key']);
    expect(second).toBe(first);
    expect(delays).toEqual([1000]);
  });

  it('retries a 503 overloaded after its Retry-After plus jitter (never sooner), same Idempotency-Key', async () => {
    server = await ScriptedServer.start((_, index) =>
      index < 2 ? { ...error(503, 'overloaded'), headers: { 'retry-after': '1' } } : { status: 201, body: MESSAGE },
    );
    const delays: number[] = [];
    const draws = [0.25, 0.9];
    const api = createPetstoreClient({
      baseUrl: server.baseUrl,
      sleep: async (ms) => void delays.push(ms),
      random: () => draws.shift() ?? 0,
    });
    expect(await unwrap(api.POST('/messages', { body: { message: 'hi' } }))).toEqual(MESSAGE);
    expect(delays).toEqual([1250, 1900]);
    const keys = server.seen.map((s) => s.headers['idempotency-key']);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toBeTruthy();
  });

  it('keeps a jittered overloaded retry within maxTotalRetryMs; gives up when Retry-After does not fit', async () => {
    server = await ScriptedServer.start(() => ({ ...error(503, 'overloaded'), headers: { 'retry-after': '1' } }));
    const delays: number[] = [];
    const api = createPetstoreClient({
      baseUrl: server.baseUrl,
      retries: 5,
      maxTotalRetryMs: 2500,
      sleep: async (ms) => void delays.push(ms),
      random: () => 0.99,
    });
    await expect(api.GET('/pets')).rejects.toMatchObject({ status: 503, code: 'overloaded' });
    // 1990 ms, then what is left of the budget (510 ms) is under the 1 s asked: no second retry.
    expect(delays).toEqual([1990]);
    expect(server.seen).toHaveLength(2);
  });

  it('does not wait for a Retry-After beyond maxRetryDelayMs', async () => {
    server = await ScriptedServer.start(() => ({ ...error(429, 'rate_limited'), headers: { 'retry-after': '120' } }));
    const delays: number[] = [];
    const api = createPetstoreClient({ baseUrl: server.baseUrl, sleep: async (ms) => void delays.push(ms) });
    await expect(api.GET('/pets')).rejects.toMatchObject({ status: 429, code: 'rate_limited' });
    expect(delays).toEqual([]);
    expect(server.seen).toHaveLength(1);
  });

  it('stops retrying when the next wait would take the total past maxTotalRetryMs', async () => {
    server = await ScriptedServer.start(() => ({
      ...error(503, 'service_unavailable'),
      headers: { 'retry-after': '2' },
    }));
    const delays: number[] = [];
    const api = createPetstoreClient({
      baseUrl: server.baseUrl,
      retries: 5,
      maxTotalRetryMs: 5000,
      sleep: async (ms) => void delays.push(ms),
    });
    await expect(api.GET('/categories')).rejects.toMatchObject({ status: 503, code: 'service_unavailable' });
    expect(delays).toEqual([2000, 2000]);
    expect(server.seen).toHaveLength(3);
  });

  it('does not wait on a 429 too_many_auth_failures: the key is wrong, a wait ends in the same error', async () => {
    server = await ScriptedServer.start(() => ({
      ...error(429, 'too_many_auth_failures'),
      headers: { 'retry-after': '1' },
    }));
    const delays: number[] = [];
    const api = createPetstoreClient({ baseUrl: server.baseUrl, sleep: async (ms) => void delays.push(ms) });
    await expect(api.GET('/accounts/me')).rejects.toMatchObject({ status: 429, code: 'too_many_auth_failures' });
    expect(delays).toEqual([]);
    expect(server.seen).toHaveLength(1);
  });

  it('types a resolved call as the success: data is the body, not T | undefined, and codes are ErrorCode', async () => {
    server = await ScriptedServer.start(() => ({ status: 202, body: MESSAGE }));
    const api = createPetstoreClient({ baseUrl: server.baseUrl });
    // These assignments compile only if `data` is the operation's body type (the type-check of this spec).
    const { data } = await api.POST('/messages', { body: { message: 'hi' } });
    const message: components['schemas']['Message'] = data;
    const status: string = data.status;
    expect([message.id, status]).toEqual(['m-1', 'queued']);
    const known: ErrorCode = 'too_many_auth_failures';
    const newer: ErrorCode = 'a_code_added_later';
    // @ts-expect-error KnownErrorCode is the documented list only
    const unknown: KnownErrorCode = 'a_code_added_later';
    const placing: OperationErrorCode<'/store/orders', 'post'>[] = ['insufficient_stock', 'unknown_pet', 'conflict'];
    // @ts-expect-error placing an order never answers too_many_keys
    const notPlacing: OperationErrorCode<'/store/orders', 'post'> = 'too_many_keys';
    expect([known, newer, unknown, placing, notPlacing]).toHaveLength(5);
  });

  it('types the webhook endpoint calls: PATCH its fields, rotate its secret with or without a window', async () => {
    const endpoint = { id: 4, url: 'https://example.com/h', events: ['order.placed'], createdAt: MESSAGE.createdAt };
    const rotation = { secret: 'whsec_new', expiresAt: '2026-11-24T10:00:00.000Z' };
    server = await ScriptedServer.start((request) =>
      request.method === 'PATCH' ? { status: 200, body: endpoint } : { status: 200, body: rotation },
    );
    const api = createPetstoreClient({ baseUrl: server.baseUrl });
    const path = { endpointId: 4 };
    // These assignments compile only if the bodies are the operations' types (the type-check of this spec).
    const { data: updated } = await api.PATCH('/webhooks/endpoints/{endpointId}', {
      params: { path },
      body: { events: ['order.placed'], enabled: true },
    });
    const events: components['schemas']['WebhookEndpoint']['events'] = updated.events;
    const { data: rotated } = await api.POST('/webhooks/endpoints/{endpointId}/secret/rotate', { params: { path } });
    const secret: string = rotated.secret;
    await api.POST('/webhooks/endpoints/{endpointId}/secret/rotate', {
      params: { path },
      body: { expiresInSeconds: 60 },
    });
    // @ts-expect-error a PATCH cannot set the secret
    const secretless: components['schemas']['WebhookEndpointUpdate'] = { secret: 'whsec_mine' };
    expect([events, secret, rotated.expiresAt, secretless]).toEqual([
      ['order.placed'],
      'whsec_new',
      rotation.expiresAt,
      { secret: 'whsec_mine' },
    ]);
    expect(server.seen.map((s) => [s.method, s.url, s.body])).toEqual([
      ['PATCH', '/webhooks/endpoints/4', '{"events":["order.placed"],"enabled":true}'],
      ['POST', '/webhooks/endpoints/4/secret/rotate', ''],
      ['POST', '/webhooks/endpoints/4/secret/rotate', '{"expiresInSeconds":60}'],
    ]);
  });

  it('rejects any other error at once with its code, status, message and request id', async () => {
    server = await ScriptedServer.start(() => error(404, 'not_found'));
    const api = createPetstoreClient({ baseUrl: server.baseUrl });
    const failure = await api.GET('/pets/{petId}', { params: { path: { petId: 7 } } }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(PetstoreApiError);
    expect({ ...(failure as PetstoreApiError), message: (failure as PetstoreApiError).message }).toMatchObject({
      status: 404,
      code: 'not_found',
      message: 'not_found happened',
      requestId: 'req-1',
    });
    expect(server.seen.map((s) => s.url)).toEqual(['/pets/7']);
    expect((failure as PetstoreApiError).documentationUrl).toBeUndefined(); // the body has none
  });

  it("gives an error's documentationUrl as an absolute URL of the service", async () => {
    server = await ScriptedServer.start(() => ({
      status: 409,
      body: { code: 'conflict', message: 'later', status: 409, documentationUrl: '/docs/errors#conflict' },
    }));
    const api = createPetstoreClient({ baseUrl: server.baseUrl });
    const failure = (await api
      .DELETE('/pets/{petId}', { params: { path: { petId: 7 } } })
      .catch((e: unknown) => e)) as {
      documentationUrl?: string;
    };
    expect(failure.documentationUrl).toBe(`${server.baseUrl}/docs/errors#conflict`);
  });

  it('keeps an Idempotency-Key the caller gives, and sends none on a GET', async () => {
    server = await ScriptedServer.start((request) =>
      request.method === 'GET' ? { status: 200, body: [] } : { status: 202, body: MESSAGE },
    );
    let generated = 0;
    const api = createPetstoreClient({ baseUrl: server.baseUrl, idempotencyKey: () => `generated-${++generated}` });
    await api.POST('/messages', { body: { message: 'hi' }, params: { header: { 'Idempotency-Key': 'mine' } } });
    await api.POST('/messages', { body: { message: 'hi' } });
    await api.GET('/messages');
    expect(server.seen.map((s) => s.headers['idempotency-key'])).toEqual(['mine', 'generated-1', undefined]);
  });

  it('lists every item, following Link: rel="next" with the query it names', async () => {
    const pages: Record<string, Answer> = {
      '/pets?status=available': {
        status: 200,
        headers: { link: '</pets?status=available&cursor=c1&limit=2>; rel="next"' },
        body: [
          { id: 1, name: 'A', categoryId: 1, status: 'available' },
          { id: 2, name: 'B', categoryId: 1, status: 'available' },
        ],
      },
      '/pets?status=available&cursor=c1&limit=2': {
        status: 200,
        headers: {
          link: '<https://elsewhere.invalid/x>; rel="prev", </pets?status=available&cursor=c2&limit=2>; rel="next"',
        },
        body: [{ id: 3, name: 'C', categoryId: 1, status: 'available' }],
      },
      '/pets?status=available&cursor=c2&limit=2': {
        status: 200,
        body: [{ id: 4, name: 'D', categoryId: 1, status: 'available' }],
      },
    };
    server = await ScriptedServer.start((request) => pages[request.url] ?? error(404, 'not_found'));
    const api = createPetstoreClient({ baseUrl: server.baseUrl, apiKey: 'psk_test' });
    const names: string[] = [];
    for await (const pet of api.list('/pets', { status: ['available'] })) names.push(pet.name);
    expect(names).toEqual(['A', 'B', 'C', 'D']);
    expect(server.seen.map((s) => s.url)).toEqual(Object.keys(pages));
    expect(server.seen.every((s) => s.headers.authorization === 'Bearer psk_test')).toBe(true);
  });

  it("lists the event log with its filters: list('/events') is typed and follows the pages", async () => {
    const event = (n: number) => ({
      id: `00000000-0000-4000-8000-00000000000${n}`,
      type: 'order.placed' as const,
      timestamp: '2026-11-25T09:00:00.000Z',
      data: { id: n },
    });
    server = await ScriptedServer.start((request) =>
      request.url.includes('cursor=e1')
        ? { status: 200, body: [event(1)] }
        : {
            status: 200,
            headers: { link: '</events?type=order.placed&cursor=e1&limit=1>; rel="next"' },
            body: [event(2)],
          },
    );
    const api = createPetstoreClient({ baseUrl: server.baseUrl, apiKey: 'psk_test' });
    const seen: string[] = [];
    const query = { type: ['order.placed' as const], createdAfter: '2026-11-01T00:00:00Z', limit: 1 };
    for await (const e of api.list('/events', query))
      if (e.type === 'order.placed') seen.push(`${e.type} ${e.data.id}`);
    expect(seen).toEqual(['order.placed 2', 'order.placed 1']);
    const first = new URL(server.seen[0].url, 'http://x');
    expect(first.pathname).toBe('/events');
    expect(first.searchParams.getAll('type')).toEqual(['order.placed']);
    expect(first.searchParams.get('createdAfter')).toBe('2026-11-01T00:00:00Z');
    expect(server.seen[1].url).toBe('/events?type=order.placed&cursor=e1&limit=1');
  });

  it('resumes the commit-order feed from a saved position, following rel="next" past rel="prev"', async () => {
    const event = (n: number) => ({
      id: `00000000-0000-4000-8000-00000000000${n}`,
      type: 'order.placed' as const,
      timestamp: '2026-11-25T09:00:00.000Z',
      data: { id: n, petId: 1, quantity: 1, complete: false, status: 'placed' },
      position: `p${n}`,
    });
    server = await ScriptedServer.start((request) =>
      request.url === '/events?startingAfter=p1'
        ? {
            status: 200,
            headers: {
              link: '</events?endingBefore=p2&limit=20>; rel="prev", </events?startingAfter=p2&limit=20>; rel="next"',
            },
            body: [event(2)],
          }
        : request.url === '/events?startingAfter=p2&limit=20'
          ? { status: 200, body: [event(3)] }
          : error(404, 'not_found'),
    );
    const api = createPetstoreClient({ baseUrl: server.baseUrl, apiKey: 'psk_test' });
    let saved = 'p1';
    for await (const entry of api.list('/events', { startingAfter: saved })) saved = entry.position ?? saved;
    expect(saved).toBe('p3');
    expect(server.seen.map((s) => s.url)).toEqual(['/events?startingAfter=p1', '/events?startingAfter=p2&limit=20']);
  });

  describe('conditional requests', () => {
    const PET = { id: 7, name: 'Rex', categoryId: 1, status: 'available' };
    const TAG = '"q3v8AyNHfsn0e5q3PzbYwQ"';

    it('exposes the ETag of a response, and null where there is none', async () => {
      server = await ScriptedServer.start((request) =>
        request.url === '/pets/7' ? { status: 200, headers: { etag: TAG }, body: PET } : { status: 200, body: [] },
      );
      const api = createPetstoreClient({ baseUrl: server.baseUrl, apiKey: 'psk_test' });
      const read = await api.GET('/pets/{petId}', { params: { path: { petId: 7 } } });
      expect(read).toEqual(expect.objectContaining({ data: PET, etag: TAG, notModified: false }));
      const list = await api.GET('/pets');
      expect([list.etag, list.notModified]).toEqual([null, false]);
    });

    it('sends If-Match when asked, and rejects a 412 with precondition_failed', async () => {
      server = await ScriptedServer.start((request) =>
        request.headers['if-match'] === TAG
          ? { status: 200, headers: { etag: '"next"' }, body: { ...PET, name: 'Max' } }
          : error(412, 'precondition_failed'),
      );
      const api = createPetstoreClient({ baseUrl: server.baseUrl, apiKey: 'psk_test' });
      const changed = await api.PATCH('/pets/{petId}', {
        params: { path: { petId: 7 }, header: { 'If-Match': TAG } },
        body: { name: 'Max' },
      });
      expect([changed.data.name, changed.etag]).toEqual(['Max', '"next"']);
      const stale = api.PATCH('/pets/{petId}', {
        params: { path: { petId: 7 }, header: { 'If-Match': '"old"' } },
        body: { name: 'Lost' },
      });
      await expect(stale).rejects.toMatchObject({ status: 412, code: 'precondition_failed' });
      const removed = await api.DELETE('/pets/{petId}', {
        params: { path: { petId: 7 }, header: { 'If-Match': TAG } },
      });
      expect(removed.response.status).toBe(200);
      expect(server.seen.map((s) => [s.method, s.headers['if-match']])).toEqual([
        ['PATCH', TAG],
        ['PATCH', '"old"'],
        ['DELETE', TAG],
      ]);
    });

    it('resolves a 304 to If-None-Match as not modified (no body, no error, not retried)', async () => {
      server = await ScriptedServer.start((request) =>
        request.headers['if-none-match'] === TAG
          ? { status: 304, headers: { etag: TAG } }
          : { status: 200, headers: { etag: TAG }, body: PET },
      );
      const api = createPetstoreClient({ baseUrl: server.baseUrl, apiKey: 'psk_test' });
      const again = await api.GET('/pets/{petId}', {
        params: { path: { petId: 7 }, header: { 'If-None-Match': TAG } },
      });
      expect([again.notModified, again.etag, again.data, again.response.status]).toEqual([true, TAG, undefined, 304]);
      expect(server.seen).toHaveLength(1);
    });
  });

  describe('safe retries of a request that got no response', () => {
    /** The global fetch, but the first `failures` attempts throw as a lost connection does: after sending, or not. */
    function losing(failures: number, how: 'after sending' | 'before sending' | 'hanging') {
      let attempts = 0;
      return async (request: Request): Promise<Response> => {
        if (attempts++ >= failures) return fetch(request);
        if (how === 'hanging') return new Promise<Response>(() => undefined);
        if (how === 'after sending') await (await fetch(request)).arrayBuffer();
        throw new TypeError('fetch failed', { cause: new Error('ECONNRESET') });
      };
    }

    it('sends a POST whose response was lost again with the same key, after a full-jitter wait', async () => {
      server = await ScriptedServer.start(() => ({ status: 202, body: MESSAGE }));
      const delays: number[] = [];
      const api = createPetstoreClient({
        baseUrl: server.baseUrl,
        fetch: losing(2, 'after sending'),
        sleep: async (ms) => void delays.push(ms),
        random: () => 0.5,
      });
      const result = await api.POST('/messages', { body: { message: 'hi' } });
      expect(result.data).toEqual(MESSAGE);
      const keys = server.seen.map((s) => s.headers['idempotency-key']);
      expect(keys).toHaveLength(3);
      expect(new Set(keys).size).toBe(1);
      expect(result.idempotencyKey).toBe(keys[0]);
      // Half of 0.5 s, then half of 1 s: a random wait up to a doubling bound.
      expect(delays).toEqual([250, 500]);
    });

    it('gives up after maxNetworkRetries with a PetstoreConnectionError carrying the key to send again', async () => {
      server = await ScriptedServer.start(() => ({ status: 202, body: MESSAGE }));
      const api = createPetstoreClient({
        baseUrl: server.baseUrl,
        fetch: losing(5, 'before sending'),
        maxNetworkRetries: 1,
        sleep: async () => undefined,
      });
      const failure = await api
        .POST('/messages', { body: { message: 'hi' }, params: { header: { 'Idempotency-Key': 'mine' } } })
        .catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(PetstoreConnectionError);
      expect(failure).toBeInstanceOf(PetstoreApiError);
      expect(failure).toMatchObject({ status: 0, code: 'connection_error', idempotencyKey: 'mine', requestId: null });
      expect((failure as Error).cause).toBeInstanceOf(TypeError);
      // The same key again, once the connection is back: what the service did (if anything) is replayed.
      const again = createPetstoreClient({ baseUrl: server.baseUrl });
      const { idempotencyKey } = await again.POST('/messages', {
        body: { message: 'hi' },
        params: { header: { 'Idempotency-Key': (failure as PetstoreConnectionError).idempotencyKey ?? '' } },
      });
      expect(idempotencyKey).toBe('mine');
    });

    it('times an attempt out after timeoutMs and retries it; `timeout` when none answers', async () => {
      server = await ScriptedServer.start(() => ({ status: 200, body: [] }));
      const api = createPetstoreClient({ baseUrl: server.baseUrl, fetch: losing(1, 'hanging'), timeoutMs: 50 });
      const { data } = await api.GET('/messages');
      expect(data).toEqual([]);
      const never = createPetstoreClient({
        baseUrl: server.baseUrl,
        fetch: losing(9, 'hanging'),
        timeoutMs: 20,
        maxNetworkRetries: 1,
        sleep: async () => undefined,
      });
      await expect(never.GET('/messages')).rejects.toMatchObject({ code: 'timeout', status: 0 });
    });

    it('sends a DELETE or PATCH again with its key; not a PUT (maybe done), nor an aborted call', async () => {
      server = await ScriptedServer.start((request) =>
        request.method === 'DELETE' ? { status: 204 } : { status: 200, body: { petId: 1, quantity: 2 } },
      );
      const api = createPetstoreClient({
        baseUrl: server.baseUrl,
        fetch: losing(1, 'after sending'),
        sleep: async () => undefined,
      });
      const { idempotencyKey } = await api.DELETE('/store/orders/{orderId}', { params: { path: { orderId: 1 } } });
      // The lost attempt and its retry, with the one key: the service replays the first cancel.
      expect(server.seen.map((s) => [s.method, s.headers['idempotency-key']])).toEqual([
        ['DELETE', idempotencyKey],
        ['DELETE', idempotencyKey],
      ]);

      const once = createPetstoreClient({ baseUrl: server.baseUrl, fetch: losing(1, 'after sending') });
      const failure = await once
        .PUT('/store/inventory/{petId}', { params: { path: { petId: 1 } }, body: { quantity: 2 } })
        .catch((e: unknown) => e);
      expect(failure).toMatchObject({ code: 'connection_error', idempotencyKey: undefined });
      expect((failure as Error).message).toMatch(/may have been done/);
      expect(server.seen).toHaveLength(3);

      const aborted = new AbortController();
      aborted.abort(new Error('the caller gave up'));
      const patient = createPetstoreClient({ baseUrl: server.baseUrl, sleep: async () => undefined });
      await expect(patient.GET('/messages', { signal: aborted.signal })).rejects.not.toBeInstanceOf(PetstoreApiError);
      expect(server.seen).toHaveLength(3);
    });

    it('retries 409 idempotency_key_in_use with the same key; no other 409', async () => {
      server = await ScriptedServer.start((request, index) =>
        request.url === '/messages'
          ? index === 0
            ? error(409, 'idempotency_key_in_use')
            : { status: 202, body: MESSAGE }
          : error(409, 'pet_not_available'),
      );
      const delays: number[] = [];
      const api = createPetstoreClient({
        baseUrl: server.baseUrl,
        sleep: async (ms) => void delays.push(ms),
        random: () => 1 - Number.EPSILON,
      });
      const { data, idempotencyKey } = await api.POST('/messages', { body: { message: 'hi' } });
      expect(data).toEqual(MESSAGE);
      expect(server.seen.map((s) => s.headers['idempotency-key'])).toEqual([idempotencyKey, idempotencyKey]);
      expect(delays).toEqual([500]);
      const refused = await api.POST('/store/orders', { body: { petId: 1, quantity: 1 } }).catch((e: unknown) => e);
      expect(refused).toMatchObject({ status: 409, code: 'pet_not_available', idempotencyKey: expect.any(String) });
      expect(server.seen).toHaveLength(3);
    });
  });

  it('gives a non-JSON error the client code http_error (a ClientErrorCode)', async () => {
    server = await ScriptedServer.start(() => ({ status: 502, body: undefined }));
    const api = createPetstoreClient({ baseUrl: server.baseUrl });
    const failure = await api.GET('/messages').then(
      () => undefined,
      (e: PetstoreApiError) => e,
    );
    const code: ClientErrorCode | KnownErrorCode | undefined = failure?.code as ClientErrorCode | undefined;
    expect([failure?.status, code]).toEqual([502, 'http_error']);
  });

  it('lists the items under a resource with its path parameters', async () => {
    server = await ScriptedServer.start(() => ({ status: 200, body: [] }));
    const api = createPetstoreClient({ baseUrl: server.baseUrl });
    for await (const delivery of api.list(
      '/webhooks/endpoints/{endpointId}/deliveries',
      { limit: 5 },
      { endpointId: 3 },
    ))
      void delivery;
    expect(server.seen.map((s) => s.url)).toEqual(['/webhooks/endpoints/3/deliveries?limit=5']);
  });

  it('reads Retry-After as seconds or as an HTTP-date', () => {
    const now = Date.parse('2026-11-23T10:00:00Z');
    expect(retryAfterMs('5', now)).toBe(5000);
    expect(retryAfterMs('Mon, 23 Nov 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(null, now)).toBeUndefined();
  });

  describe('issue 49: a client that follows', () => {
    const entry = (n: number) => ({
      id: `00000000-0000-4000-8000-00000000000${n}`,
      type: 'order.placed' as const,
      timestamp: '2026-11-25T09:00:00.000Z',
      data: { id: n, petId: 1, quantity: 1, complete: false, status: 'placed' },
      position: `p${n}`,
    });
    const EMPTY_TAG = '"end-of-feed"';

    it('followEvents resumes after a saved position, polls its end with If-None-Match, waits a 503', async () => {
      const script: Answer[] = [
        {
          status: 200,
          headers: { link: '</events?startingAfter=p3&limit=2>; rel="next"', etag: '"a"' },
          body: [entry(2), entry(3)],
        },
        { status: 200, headers: { etag: '"b"' }, body: [entry(4)] },
        { status: 200, headers: { etag: EMPTY_TAG }, body: [] },
        { status: 304, headers: { etag: EMPTY_TAG } },
        { ...error(503, 'service_unavailable'), headers: { 'retry-after': '7' } },
        { status: 200, headers: { etag: '"c"' }, body: [entry(5)] },
      ];
      server = await ScriptedServer.start((_, index) => script[index] ?? error(500, 'internal_error'));
      const log: string[] = [];
      const stop = new AbortController();
      const api = createPetstoreClient({
        baseUrl: server.baseUrl,
        apiKey: 'psk_test',
        retries: 0,
        sleep: async (ms) => void log.push(`wait ${ms}`),
        onRetry: ({ attempt, delayMs, status, code, retryAfterMs }) =>
          void log.push(`retry ${attempt} in ${delayMs} after ${status} ${code} (asked ${retryAfterMs})`),
      });
      for await (const event of api.followEvents({ after: 'p1', limit: 2, signal: stop.signal })) {
        log.push(`apply ${event.id.slice(-1)} at ${event.position}`);
        if (event.position === 'p5') stop.abort();
      }
      expect(log).toEqual([
        'apply 2 at p2',
        'apply 3 at p3',
        'apply 4 at p4',
        'wait 1000', // the end of the feed for now
        'wait 1000', // an empty page: its tag is the end's
        'wait 1000', // 304: nothing new
        'retry 1 in 7000 after 503 service_unavailable (asked 7000)',
        'wait 7000',
        'apply 5 at p5',
      ]);
      expect(server.seen.map((s) => [s.url, s.headers['if-none-match']])).toEqual([
        ['/events?startingAfter=p1&limit=2', undefined],
        ['/events?startingAfter=p3&limit=2', undefined],
        ['/events?startingAfter=p4&limit=2', undefined],
        ['/events?startingAfter=p4&limit=2', EMPTY_TAG],
        ['/events?startingAfter=p4&limit=2', EMPTY_TAG],
        ['/events?startingAfter=p4&limit=2', EMPTY_TAG],
      ]);
      expect(server.seen.every((s) => s.headers.authorization === 'Bearer psk_test')).toBe(true);
    });

    it("followEvents starts at the feed's start, backs off with jitter, ends on an error no wait cures", async () => {
      const script: Answer[] = [
        error(500, 'internal_error'),
        error(502, 'http_error'),
        { status: 200, headers: { etag: '"a"' }, body: [entry(1)] },
        error(400, 'validation_failed'),
      ];
      server = await ScriptedServer.start((_, index) => script[index] ?? error(500, 'internal_error'));
      const delays: number[] = [];
      const notices: number[] = [];
      const api = createPetstoreClient({
        baseUrl: server.baseUrl,
        sleep: async (ms) => void delays.push(ms),
        random: () => 0.5,
        onRetry: ({ attempt, status }) => void notices.push(attempt, status),
      });
      const applied: string[] = [];
      const following = (async () => {
        for await (const event of api.followEvents({ type: ['order.placed'] })) applied.push(event.position);
      })();
      await expect(following).rejects.toMatchObject({ status: 400, code: 'validation_failed' });
      expect(applied).toEqual(['p1']);
      // Half to all of 1 s, 2 s… (random 0.5: three quarters), then the poll interval.
      expect(delays).toEqual([750, 1500, 1000]);
      expect(notices).toEqual([1, 500, 2, 502]);
      expect(server.seen.map((s) => s.url)).toEqual([
        '/events?type=order.placed&order=commit&limit=100',
        '/events?type=order.placed&order=commit&limit=100',
        '/events?type=order.placed&order=commit&limit=100',
        '/events?type=order.placed&startingAfter=p1&limit=100',
      ]);
    });

    it('followEvents ends on its signal, in a wait (even one ignoring it) or a request, and on break', async () => {
      server = await ScriptedServer.start(() => ({ status: 200, headers: { etag: EMPTY_TAG }, body: [] }));
      const stop = new AbortController();
      const api = createPetstoreClient({
        baseUrl: server.baseUrl,
        sleep: () => {
          stop.abort();
          return new Promise<void>(() => undefined); // never resolves: only the abort ends the wait
        },
      });
      const yielded: unknown[] = [];
      for await (const event of api.followEvents({ signal: stop.signal })) yielded.push(event);
      expect([yielded, server.seen.length]).toEqual([[], 1]);

      await server.close();
      server = await ScriptedServer.start(() => ({ status: 200, body: [entry(1), entry(2)] }));
      const another = createPetstoreClient({ baseUrl: server.baseUrl });
      for await (const event of another.followEvents()) {
        yielded.push(event.position);
        break;
      }
      expect([yielded, server.seen.length]).toEqual([['p1'], 1]);

      // Aborted while a request is on its way (a feed that does not answer): the iteration ends, no error.
      const hanging = new AbortController();
      const asked: string[] = [];
      const stuck = createPetstoreClient({
        baseUrl: server.baseUrl,
        fetch: (request) =>
          new Promise<Response>((_, reject) => {
            asked.push(request.url);
            request.signal.addEventListener('abort', () => reject(request.signal.reason), { once: true });
            hanging.abort();
          }),
      });
      for await (const event of stuck.followEvents({ after: 'p2', signal: hanging.signal })) yielded.push(event);
      expect([yielded, asked]).toEqual([['p1'], [`${server.baseUrl}/events?startingAfter=p2&limit=100`]]);
    });

    it('list() revalidates the pages of its cache: a 304 yields the stored page, follows its stored Link', async () => {
      const PET = (id: number, name: string) => ({ id, name, categoryId: 1, status: 'available' });
      let round = 0;
      server = await ScriptedServer.start((request): Answer => {
        const second = request.url.includes('cursor=c1');
        if (round === 1 && !second && request.headers['if-none-match'] === '"p1"') return { status: 304 };
        if (second)
          return round === 0
            ? { status: 200, headers: { etag: '"p2"' }, body: [PET(2, 'B')] }
            : { status: 200, headers: { etag: '"p2-new"' }, body: [PET(2, 'B2')] };
        return {
          status: 200,
          headers: { etag: '"p1"', link: '</pets?cursor=c1&limit=1>; rel="next"' },
          body: [PET(1, 'A')],
        };
      });
      const api = createPetstoreClient({ baseUrl: server.baseUrl });
      const cache = new Map<string, CachedPage>();
      const names = async () => {
        const seen: string[] = [];
        for await (const pet of api.list('/pets', { limit: 1 }, { cache })) {
          seen.push(pet.name);
          pet.name = 'changed by the caller'; // not by the cache's copy
        }
        return seen;
      };
      expect(await names()).toEqual(['A', 'B']);
      round = 1;
      expect(await names()).toEqual(['A', 'B2']);
      expect(server.seen.map((s) => [s.url, s.headers['if-none-match']])).toEqual([
        ['/pets?limit=1', undefined],
        ['/pets?cursor=c1&limit=1', undefined],
        ['/pets?limit=1', '"p1"'],
        ['/pets?cursor=c1&limit=1', '"p2"'],
      ]);
      expect(cache.get(`${server.baseUrl}/pets?cursor=c1&limit=1`)).toEqual({
        etag: '"p2-new"',
        items: [PET(2, 'B2')],
        next: null,
      });
    });

    it('onRetry tells each wait before it (attempt, delay, status, code, Retry-After); throwing gives up', async () => {
      server = await ScriptedServer.start((_, index) =>
        index === 0
          ? { ...error(429, 'rate_limited'), headers: { 'retry-after': '60' } }
          : index === 1
            ? { ...error(503, 'overloaded'), headers: { 'retry-after': '1' } }
            : index === 2
              ? { status: 202, body: MESSAGE }
              : { ...error(429, 'rate_limited'), headers: { 'retry-after': '30' } },
      );
      const log: unknown[] = [];
      const api = createPetstoreClient({
        baseUrl: server.baseUrl,
        maxTotalRetryMs: 120_000,
        random: () => 0,
        sleep: async (ms) => void log.push(`wait ${ms}`),
        onRetry: (retry) => void log.push(retry),
      });
      const { idempotencyKey } = await api.POST('/messages', { body: { message: 'hi' } });
      expect(log).toEqual([
        {
          attempt: 1,
          delayMs: 60_000,
          method: 'POST',
          url: `${server.baseUrl}/messages`,
          status: 429,
          code: 'rate_limited',
          retryAfterMs: 60_000,
          requestId: 'req-1',
          idempotencyKey,
        },
        'wait 60000',
        expect.objectContaining({ attempt: 2, delayMs: 1000, status: 503, code: 'overloaded', requestId: 'req-2' }),
        'wait 1000',
      ]);
      const impatient = createPetstoreClient({
        baseUrl: server.baseUrl,
        sleep: async (ms) => void log.push(`wait ${ms}`),
        onRetry: ({ delayMs }) => {
          throw new Error(`not waiting ${delayMs} ms`);
        },
      });
      await expect(impatient.GET('/categories')).rejects.toThrow('not waiting 30000 ms');
      expect([log.length, server.seen.length]).toEqual([4, 4]);
    });

    it('onRetry tells a lost response: status 0, connection_error', async () => {
      let attempts = 0;
      const notices: unknown[] = [];
      const api = createPetstoreClient({
        baseUrl: 'http://127.0.0.1:9',
        fetch: async () => {
          if (attempts++ === 0) throw new TypeError('fetch failed');
          return new Response('[]', { status: 200, headers: { 'content-type': 'application/json' } });
        },
        random: () => 0.5,
        sleep: async () => undefined,
        onRetry: ({ attempt, status, code, delayMs, requestId }) =>
          void notices.push({ attempt, status, code, delayMs, requestId }),
      });
      await api.GET('/categories');
      expect(notices).toEqual([{ attempt: 1, status: 0, code: 'connection_error', delayMs: 250, requestId: null }]);
    });
  });
});
