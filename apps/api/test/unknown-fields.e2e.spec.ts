import * as http from 'node:http';
import { ADMIN_KEY, expectError, TestApp } from './support/test-app';

type Operation = { requestBody?: unknown; parameters?: { in: string; name: string }[] };

/**
 * One rule, walked over every operation the service describes (a new operation is covered as it is declared): a
 * query parameter or a body field the operation does not define is a 400 naming it, and so is a body sent to an
 * operation that takes none (issue 24 item 4, issue 21 item 6). Nothing changes meanwhile.
 */
describe('every operation refuses what it does not define (HTTP, real PostgreSQL)', () => {
  let api: TestApp;
  let operations: { method: string; path: string; operation: Operation }[];

  beforeAll(async () => {
    api = await TestApp.start();
    const document = (await api.get('/openapi.json')).body as { paths: Record<string, Record<string, Operation>> };
    operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
        .map(([method, operation]) => ({
          method: method.toUpperCase(),
          path: path.replace(/\{\w+\}/g, '1'),
          operation,
        })),
    );
  });
  afterAll(() => api.close());

  const count = async () => Number((await api.sql(`SELECT count(*) AS n FROM accounts`))[0].n);

  it('refuses an unknown query parameter on every operation, naming it', async () => {
    expect(operations.length).toBeGreaterThan(20);
    for (const { method, path } of operations) {
      const response = await api.request(method, `${path}?access_token=x`, { key: ADMIN_KEY });
      expectError(response, 400, 'validation_failed');
      expect({ method, path, details: response.body.details }).toEqual({
        method,
        path,
        details: [{ field: 'access_token', message: expect.stringMatching(/^access_token is not a known /) }],
      });
    }
  });

  it('refuses a body on every operation that takes none, naming its fields', async () => {
    const bodiless = operations.filter((o) => o.method !== 'GET' && !o.operation.requestBody);
    expect(bodiless.map((o) => `${o.method} ${o.path}`)).toContain('DELETE /accounts/me/api-keys/1');
    const before = await count();
    for (const { method, path } of bodiless) {
      const response = await api.request(method, path, { key: ADMIN_KEY, body: { role: 'admin' } });
      expectError(response, 400, 'validation_failed');
      expect({ method, path, fields: response.body.details.map((d: { field: string }) => d.field) }).toEqual({
        method,
        path,
        fields: ['role'],
      });
    }
    expect(await count()).toBe(before);
  });

  it('refuses a body on every GET (it was read and ignored), naming it; an unknown path stays a 404', async () => {
    const gets = operations.filter((o) => o.method === 'GET');
    expect(gets.length).toBeGreaterThan(10);
    // fetch sends no body with a GET: node:http does.
    const getWithBody = (path: string) =>
      new Promise<{ status: number; body: { code?: string; details?: unknown } }>((resolve, reject) => {
        const request = http.request(
          `${api.baseUrl}${path}`,
          {
            method: 'GET',
            // A length, not chunks: Node's parser refuses a chunked GET itself (malformed HTTP).
            headers: {
              authorization: `Bearer ${ADMIN_KEY}`,
              'content-type': 'application/json',
              'content-length': '17',
            },
          },
          (response) => {
            let text = '';
            response.on('data', (chunk: Buffer) => (text += chunk.toString()));
            response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
          },
        );
        request.on('error', reject);
        request.end('{"status":"sold"}');
      });
    for (const { path } of gets) {
      const response = await getWithBody(path);
      expect({ path, status: response.status, code: response.body.code, details: response.body.details }).toEqual({
        path,
        status: 400,
        code: 'validation_failed',
        details: [{ field: 'body', message: 'must be empty: GET takes no body' }],
      });
    }
    expect((await getWithBody('/no-such-thing')).status).toBe(404);
  });

  it("refuses names of every object's prototype in a body, as any other unknown field", async () => {
    for (const name of ['toString', 'valueOf', 'hasOwnProperty', '__defineGetter__', 'constructor', 'prototype']) {
      const response = await api.post('/accounts', { body: { name: 'Proto', [name]: 'x' } });
      expectError(response, 400, 'validation_failed');
      expect(response.body.details).toEqual([{ field: name, message: `${name} is not a known field` }]);
    }
  });

  it("refuses names of every object's prototype in a query, on every operation (?__proto__=1 included)", async () => {
    for (const name of ['__proto__', 'constructor', 'toString', 'prototype']) {
      for (const { method, path } of operations) {
        const response = await api.request(method, `${path}?${name}=1`, { key: ADMIN_KEY });
        expect({ method, path, status: response.status, details: response.body?.details }).toEqual({
          method,
          path,
          status: 400,
          details: [{ field: name, message: `${name} is not a known query parameter` }],
        });
      }
    }
  });

  it('still takes every defined parameter and field', async () => {
    expect((await api.get('/pets?status=available&limit=5', { key: ADMIN_KEY })).status).toBe(200);
    expect((await api.post('/accounts', { body: { name: 'Fine' } })).status).toBe(201);
    expect((await api.post('/accounts/me/api-keys', { key: ADMIN_KEY })).status).toBe(201);
    const body = { name: 'Fine', scopes: ['read'], expiresAt: new Date(Date.now() + 60_000).toISOString() };
    expect((await api.post('/accounts/me/api-keys', { key: ADMIN_KEY, body })).status).toBe(201);
  });

  it('refuses an unknown field in the optional body of POST /accounts/me/api-keys, creating no key', async () => {
    const keys = async () => Number((await api.sql(`SELECT count(*) AS n FROM api_keys`))[0].n);
    const before = await keys();
    const response = await api.post('/accounts/me/api-keys', { key: ADMIN_KEY, body: { name: 'x', role: 'admin' } });
    expectError(response, 400, 'validation_failed');
    expect(response.body.details).toEqual([{ field: 'role', message: 'role is not a known field' }]);
    expect(await keys()).toBe(before);
  });
});
