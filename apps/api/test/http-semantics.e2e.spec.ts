import { request as httpRequest } from 'node:http';
import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { ADMIN_KEY, TestApp, expectError } from './support/test-app';

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A request with exactly these headers (fetch would add Accept-Encoding and decode the body itself). */
function raw(
  api: TestApp,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string | Buffer,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${api.baseUrl}${path}`, { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }),
      );
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}

const list = (header: string | string[] | undefined): string[] =>
  String(header ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);

describe('HTTP semantics: 405 with Allow, OPTIONS, compression and CORS (HTTP, real PostgreSQL)', () => {
  let api: TestApp;

  beforeAll(async () => {
    api = await TestApp.start();
  });
  afterAll(() => api.close());

  describe('another method on a known path', () => {
    it("answers 405 method_not_allowed in the Error shape, with Allow listing the path's methods", async () => {
      const response = await api.get('/accounts');
      expectError(response, 405, 'method_not_allowed');
      expect(response.headers.get('allow')).toBe('POST, OPTIONS');
      expect(response.headers.get('x-request-id')).toBeTruthy();

      const put = await api.put('/pets/1', { key: ADMIN_KEY, body: { name: 'x' } });
      expectError(put, 405, 'method_not_allowed');
      expect(list(put.headers.get('allow') ?? '')).toEqual(['get', 'head', 'patch', 'delete', 'options']);
    });

    it('answers before authentication and before the body is read', async () => {
      const response = await api.request('DELETE', '/categories', {
        raw: '{not json',
        headers: { 'content-type': 'application/json' },
      });
      expectError(response, 405, 'method_not_allowed');
      expect(list(response.headers.get('allow') ?? '')).toEqual(['get', 'head', 'post', 'options']);
    });

    it('answers HEAD on a path without GET with 405 and no body, and HEAD where there is GET like GET', async () => {
      const refused = await raw(api, 'HEAD', '/accounts');
      expect(refused.status).toBe(405);
      expect(refused.headers['allow']).toBe('POST, OPTIONS');
      expect(refused.headers['x-request-id']).toBeTruthy();
      expect(refused.body.length).toBe(0);
      const head = await raw(api, 'HEAD', '/health/live');
      expect(head.status).toBe(200);
      expect(head.body.length).toBe(0);
    });

    it('still answers 404 on a path no operation has', async () => {
      expectError(await api.get('/nowhere'), 404, 'not_found');
      expectError(await api.put('/pets/1/nowhere', { body: {} }), 404, 'not_found');
    });
  });

  describe('OPTIONS', () => {
    it('answers 204 with Allow on a known path, and 404 on an unknown one', async () => {
      const response = await raw(api, 'OPTIONS', '/pets');
      expect(response.status).toBe(204);
      expect(list(response.headers['allow'])).toEqual(['get', 'head', 'post', 'options']);
      expect(response.headers['x-request-id']).toBeTruthy();
      const unknown = await raw(api, 'OPTIONS', '/nowhere');
      expect(unknown.status).toBe(404);
      expect(JSON.parse(unknown.body.toString())).toMatchObject({ status: 404, code: 'not_found' });
    });

    it('gives no CORS header at all without CORS_ORIGINS, even to a preflight', async () => {
      const origin = 'https://shop.example';
      const preflight = await raw(api, 'OPTIONS', '/pets', { origin, 'access-control-request-method': 'POST' });
      expect(preflight.status).toBe(204);
      const read = await raw(api, 'GET', '/health/live', { origin });
      expect(read.status).toBe(200);
      for (const response of [preflight, read]) {
        expect(Object.keys(response.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
      }
    });
  });

  describe('compression', () => {
    it('compresses the description with gzip or brotli as the client accepts, and not otherwise', async () => {
      const plain = await raw(api, 'GET', '/openapi.json');
      expect(plain.headers['content-encoding']).toBeUndefined();
      const document = JSON.parse(plain.body.toString());
      expect(Object.keys(document.paths).length).toBeGreaterThan(10);

      const gzip = await raw(api, 'GET', '/openapi.json', { 'accept-encoding': 'gzip' });
      expect(gzip.status).toBe(200);
      expect(gzip.headers['content-encoding']).toBe('gzip');
      expect(list(gzip.headers['vary'])).toContain('accept-encoding');
      expect(gzip.body.length).toBeLessThan(plain.body.length / 3);
      expect(JSON.parse(gunzipSync(gzip.body).toString())).toEqual(document);

      const head = await raw(api, 'HEAD', '/openapi.json', { 'accept-encoding': 'gzip' });
      expect(head.status).toBe(200);
      expect(head.body.length).toBe(0);

      const br = await raw(api, 'GET', '/openapi.json', { 'accept-encoding': 'br;q=1, gzip;q=0.5' });
      expect(br.headers['content-encoding']).toBe('br');
      expect(JSON.parse(brotliDecompressSync(br.body).toString())).toEqual(document);
    });

    it('leaves responses below the threshold as they are', async () => {
      const small = await raw(api, 'GET', '/health/live', { 'accept-encoding': 'gzip' });
      expect(small.status).toBe(200);
      expect(small.headers['content-encoding']).toBeUndefined();
      expect(JSON.parse(small.body.toString())).toBeTruthy();
    });

    it('compresses the Swagger UI bundle (a stream from disk) and the metrics, which read back whole', async () => {
      const html = (await raw(api, 'GET', '/docs', { 'accept-encoding': 'gzip' })).body;
      const page = html.subarray(0, 2).equals(Buffer.from([0x1f, 0x8b]))
        ? gunzipSync(html).toString()
        : html.toString();
      const bundle = /src="([^"]*swagger-ui-bundle\.js)"/.exec(page)?.[1];
      expect(bundle).toBeDefined();
      const asset = await raw(api, 'GET', new URL(String(bundle), `${api.baseUrl}/docs`).pathname, {
        'accept-encoding': 'gzip',
      });
      expect(asset.status).toBe(200);
      expect(asset.headers['content-encoding']).toBe('gzip');
      expect(asset.headers['content-type']).toMatch(/javascript/);
      expect(gunzipSync(asset.body).length).toBeGreaterThan(500_000);

      const metrics = await raw(api, 'GET', '/metrics', {
        'accept-encoding': 'gzip',
        authorization: `Bearer ${ADMIN_KEY}`,
      });
      expect(metrics.status).toBe(200);
      expect(metrics.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(metrics.body).toString()).toMatch(/^# HELP /m);
    });

    it('never inflates a body: any Content-Encoding is 415, compressed or not, and creates nothing', async () => {
      const accounts = async () => Number((await api.sql('SELECT count(*) AS n FROM accounts'))[0].n);
      const before = await accounts();
      const sent = [
        { encoding: 'gzip', body: gzipSync('{"name":"Zipped"}') },
        // Labelled gzip but sent plain: it was taken as it was.
        { encoding: 'gzip', body: Buffer.from('{"name":"Labelled"}') },
        { encoding: 'br, identity', body: Buffer.from('{"name":"Listed"}') },
      ];
      for (const { encoding, body } of sent) {
        const response = await raw(
          api,
          'POST',
          '/accounts',
          { 'content-type': 'application/json', 'content-encoding': encoding },
          body,
        );
        expect({ encoding, status: response.status, body: JSON.parse(response.body.toString()) }).toEqual({
          encoding,
          status: 415,
          body: {
            code: 'unsupported_content_encoding',
            status: 415,
            message: expect.stringContaining('send the body uncompressed'),
            documentationUrl: '/docs/errors#unsupported_content_encoding',
          },
        });
      }
      expect(await accounts()).toBe(before);
    });

    it('takes a body whose Content-Encoding is identity, and a request without a body whatever it says', async () => {
      const created = await raw(
        api,
        'POST',
        '/accounts',
        { 'content-type': 'application/json', 'content-encoding': 'Identity' },
        '{"name":"Plain"}',
      );
      expect(created.status).toBe(201);
      const read = await raw(api, 'GET', '/categories', {
        authorization: `Bearer ${ADMIN_KEY}`,
        'content-encoding': 'gzip',
      });
      expect(read.status).toBe(200);
    });
  });

  describe('CORS with a list of origins', () => {
    const shop = 'https://shop.example';
    let cors: TestApp;

    beforeAll(async () => {
      cors = await TestApp.startOn(api.databaseUrl, { http: { corsOrigins: [shop, 'http://localhost:5173'] } });
    });
    afterAll(() => cors.close());

    it("answers a listed origin's preflight with every documented method and the API's request headers", async () => {
      const response = await raw(cors, 'OPTIONS', '/store/orders', {
        origin: shop,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type, idempotency-key',
      });
      expect(response.status).toBe(204);
      expect(response.headers['access-control-allow-origin']).toBe(shop);
      expect(list(response.headers['access-control-allow-methods'])).toEqual(
        expect.arrayContaining(['get', 'head', 'post', 'put', 'patch', 'delete']),
      );
      expect(list(response.headers['access-control-allow-headers'])).toEqual(
        expect.arrayContaining(['authorization', 'content-type', 'idempotency-key']),
      );
      expect(response.headers['access-control-allow-credentials']).toBeUndefined();
      expect(list(response.headers['vary'])).toContain('origin');
      expect(response.headers['x-request-id']).toBeTruthy();
    });

    it("lets a listed origin read responses, errors included, and the API's own headers", async () => {
      const customer = await cors.customer('Browser');
      const me = await raw(cors, 'GET', '/accounts/me', { origin: shop, authorization: `Bearer ${customer.key}` });
      expect(me.status).toBe(200);
      expect(me.headers['access-control-allow-origin']).toBe(shop);
      expect(list(me.headers['access-control-expose-headers'])).toEqual(
        expect.arrayContaining([
          'x-request-id',
          'link',
          'ratelimit',
          'ratelimit-policy',
          'retry-after',
          'deprecation',
          'sunset',
          'idempotent-replayed',
        ]),
      );
      const refused = await raw(cors, 'GET', '/accounts', { origin: 'http://localhost:5173' });
      expect(refused.status).toBe(405);
      expect(refused.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    });

    it('gives an origin that is not listed no CORS header', async () => {
      const read = await raw(cors, 'GET', '/health/live', { origin: 'https://evil.example' });
      expect(read.headers['access-control-allow-origin']).toBeUndefined();
      const preflight = await raw(cors, 'OPTIONS', '/pets', {
        origin: 'https://evil.example',
        'access-control-request-method': 'DELETE',
      });
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    });

    it('still answers a plain OPTIONS (not a preflight) with Allow, and 404 where nothing is', async () => {
      const options = await raw(cors, 'OPTIONS', '/pets/1');
      expect(options.status).toBe(204);
      expect(list(options.headers['allow'])).toEqual(['get', 'head', 'patch', 'delete', 'options']);
      const unknown = await raw(cors, 'OPTIONS', '/nowhere');
      expect(unknown.status).toBe(404);
      expect(JSON.parse(unknown.body.toString())).toMatchObject({ status: 404, code: 'not_found' });
    });
  });

  describe('CORS_ORIGINS=* (read-only public use)', () => {
    let open: TestApp;

    beforeAll(async () => {
      open = await TestApp.startOn(api.databaseUrl, { http: { corsOrigins: '*' } });
    });
    afterAll(() => open.close());

    it('lets any origin read with GET and HEAD, without credentials', async () => {
      const read = await raw(open, 'GET', '/openapi.json', { origin: 'https://anyone.example' });
      expect(read.status).toBe(200);
      expect(read.headers['access-control-allow-origin']).toBe('*');
      expect(read.headers['access-control-allow-credentials']).toBeUndefined();
      expect(list(read.headers['access-control-expose-headers'])).toContain('x-request-id');
    });

    it('allows no other method and no API key cross-origin', async () => {
      const preflight = await raw(open, 'OPTIONS', '/pets', {
        origin: 'https://anyone.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      });
      expect(preflight.status).toBe(204);
      expect(list(preflight.headers['access-control-allow-methods'])).toEqual(['get', 'head']);
      expect(list(preflight.headers['access-control-allow-headers'])).not.toContain('authorization');
      const write = await raw(
        open,
        'POST',
        '/accounts',
        { origin: 'https://anyone.example', 'content-type': 'application/json' },
        '{"name":"Cross"}',
      );
      expect(write.status).toBe(201);
      expect(write.headers['access-control-allow-origin']).toBeUndefined();
    });
  });
});
