import { migrateDatabase } from '@petstore/infrastructure';
import { Client } from 'pg';
import { TestApp, expectError } from './support/test-app';

describe('OpenAPI description and health (HTTP, real PostgreSQL)', () => {
  let api: TestApp;

  beforeAll(async () => {
    api = await TestApp.start();
  });
  afterAll(() => api.close());

  it("serves OpenAPI 3.0.3, version 1.0.0, with the bearer scheme and the specification's schemas", async () => {
    const response = await api.get('/openapi.json');
    expect(response.status).toBe(200);
    const doc = response.body;
    expect(doc.openapi).toBe('3.0.3');
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.components.securitySchemes.bearer).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
    for (const name of ['NewCategory', 'Category', 'Error']) expect(doc.components.schemas).toHaveProperty(name);
    expect(doc.components.schemas.Error.required).toEqual(expect.arrayContaining(['code', 'message', 'status']));
  });

  it('documents the shared error statuses on every operation, and 401 exactly where a key is needed', async () => {
    const doc = (await api.get('/openapi.json')).body;
    for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, operation] of Object.entries<any>(item)) {
        expect([path, method, Object.keys(operation.responses)]).toEqual([
          path,
          method,
          expect.arrayContaining(['500', '503']),
        ]);
        // Every operation but the health probes is rate-limited.
        expect([path, method, '429' in operation.responses]).toEqual([path, method, !path.startsWith('/health/')]);
        const secured = (operation.security ?? []).length > 0;
        expect([path, method, '401' in operation.responses]).toEqual([path, method, secured]);
      }
    }
    expect(doc.paths['/accounts'].post.security ?? []).toEqual([]);
    expect(doc.paths['/categories'].post.security).toEqual([{ bearer: [] }]);
  });

  it('serves interactive documentation at /docs', async () => {
    const response = await fetch(`${api.baseUrl}/docs`);
    expect(response.status).toBe(200);
    expect(await response.text()).toMatch(/swagger-ui/i);
  });

  it('is live and ready', async () => {
    expect((await api.get('/health/live')).body).toEqual({
      status: 'ok',
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      commit: expect.any(String),
    });
    expect((await api.get('/health/ready')).body).toEqual({ status: 'ok' });
  });

  it('is not ready (503) while its database refuses connections, and ready again after', async () => {
    const name = `petstore_test_ready_${process.pid}_${Date.now()}`;
    const admin = new Client({ connectionString: api.databaseUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(api.databaseUrl);
    url.pathname = `/${name}`;
    await migrateDatabase(url.toString());
    const other = await TestApp.startOn(url.toString());
    try {
      expect((await other.get('/health/ready')).status).toBe(200);
      await admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, [name]);
      const down = await other.get('/health/ready');
      expectError(down, 503, 'service_unavailable');
      expect(down.headers.get('retry-after')).toBe('5');
      await admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS true`);
      expect((await other.get('/health/ready')).status).toBe(200);
    } finally {
      await other.close();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  });
});
