import { createPetstoreClient, PetstoreApiError } from '@petstore/client';
import { StoreFixtures } from './support/store-fixtures';
import { ADMIN_KEY, expectError, TestApp, TestResponse } from './support/test-app';

const DAY_MS = 86_400_000;
const inDays = (days: number) => new Date(Date.now() + days * DAY_MS).toISOString();

/** API keys with a name, scopes and an expiry (docs/api.md, "Scopes and expiry"), through HTTP on real PostgreSQL. */
describe('scoped, named, expiring API keys (HTTP, real PostgreSQL)', () => {
  let api: TestApp;
  let store: StoreFixtures;

  beforeAll(async () => {
    api = await TestApp.start();
    store = await StoreFixtures.on(api);
  });
  afterAll(async () => {
    await store?.close();
    await api?.close();
  });

  /** A new key made by `key`, which must succeed. */
  async function newKey(key: string, body?: object): Promise<{ key: string; id: number; response: TestResponse }> {
    const response = await api.post('/accounts/me/api-keys', { key, body });
    expect({ status: response.status, body: response.body }).toMatchObject({ status: 201 });
    return { key: response.body.key, id: response.body.id, response };
  }

  it('creates a named read key that expires; answers and lists name, scopes, expiresAt, lastUsedAt', async () => {
    const { key: full } = await api.customer('Lister');
    const expiresAt = new Date(Date.now() + 30 * DAY_MS);
    const {
      key: read,
      id,
      response,
    } = await newKey(full, {
      name: '  dashboard ',
      scopes: ['read'],
      expiresAt: expiresAt.toISOString(),
    });
    expect(response.body).toEqual({
      id: expect.any(Number),
      key: expect.stringMatching(/^psk_/),
      prefix: read.slice(0, 12),
      name: 'dashboard',
      scopes: ['read'],
      expiresAt: expiresAt.toISOString(),
      createdAt: expect.any(String),
      lastUsedAt: null,
    });
    expect((await api.get('/accounts/me', { key: read })).status).toBe(200);
    const listed = await api.get('/accounts/me/api-keys', { key: read });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([
      // The sign-up key: what every key was before scopes.
      expect.objectContaining({ name: null, scopes: ['full'], expiresAt: null, lastUsedAt: expect.any(String) }),
      {
        id,
        prefix: read.slice(0, 12),
        name: 'dashboard',
        scopes: ['read'],
        expiresAt: expiresAt.toISOString(),
        createdAt: expect.any(String),
        lastUsedAt: expect.any(String),
      },
    ]);
  });

  it('an empty body, or none, makes a full key that never expires (as before)', async () => {
    const { key } = await api.customer('Old caller');
    for (const body of [undefined, {}]) {
      const { response } = await newKey(key, body);
      expect(response.body).toMatchObject({ name: null, scopes: ['full'], expiresAt: null });
    }
  });

  it('a key that expires cannot create one that outlives it: its expiry by default, a later one 400', async () => {
    const { key: owner } = await api.customer('Lender');
    const lentExpiry = inDays(2);
    const { key: lent } = await newKey(owner, { name: 'lent', expiresAt: lentExpiry });
    expect((await newKey(lent, { name: 'minted' })).response.body.expiresAt).toBe(lentExpiry);
    const sooner = inDays(1);
    expect((await newKey(lent, { expiresAt: sooner })).response.body.expiresAt).toBe(sooner);
    const refused = await api.post('/accounts/me/api-keys', { key: lent, body: { expiresAt: inDays(3) } });
    expectError(refused, 400, 'validation_failed');
    expect(refused.body.details).toEqual([{ field: 'expiresAt', message: expect.stringContaining(lentExpiry) }]);
  });

  it('the ADMIN_API_KEY key is full', async () => {
    const keys = await api.get('/accounts/me/api-keys', { key: ADMIN_KEY });
    expect(keys.body[0]).toMatchObject({ scopes: ['full'], expiresAt: null });
  });

  it.each([
    ['an expiresAt in the past', { expiresAt: new Date(Date.now() - 60_000).toISOString() }, 'expiresAt'],
    ['an expiresAt more than 366 days ahead', { expiresAt: inDays(367) }, 'expiresAt'],
    ['an expiresAt that is not a date-time', { expiresAt: 'tomorrow' }, 'expiresAt'],
    ['an expiresAt without a time zone', { expiresAt: '2030-01-01T00:00:00' }, 'expiresAt'],
    ['no scope', { scopes: [] }, 'scopes'],
    ['an unknown scope', { scopes: ['admin'] }, 'scopes'],
    ['scopes that are not a list', { scopes: 'read' }, 'scopes'],
    ['an empty name', { name: '' }, 'name'],
    ['a blank name', { name: '   ' }, 'name'],
    ['a 101-character name', { name: 'x'.repeat(101) }, 'name'],
    ['null as name', { name: null }, 'name'],
    ['an unknown field', { role: 'admin' }, 'role'],
  ])('refuses %s (400, naming the field), creating nothing', async (_, body, field) => {
    const { key, id } = await api.customer('Validator');
    const response = await api.post('/accounts/me/api-keys', { key, body });
    expectError(response, 400, 'validation_failed');
    expect(response.body.details.map((d: { field: string }) => d.field)).toContain(field);
    const [{ n }] = await api.sql('SELECT count(*)::int AS n FROM api_keys WHERE account_id = $1', [id]);
    expect(n).toBe(1);
  });

  describe("a customer's read key", () => {
    let full: string;
    let read: string;
    let readId: number;
    let petId: number;

    beforeAll(async () => {
      ({ key: full } = await api.customer('Reader'));
      ({ key: read, id: readId } = await newKey(full, { name: 'reader', scopes: ['read'] }));
      petId = await store.pet({ quantity: 5 });
    });

    it('can GET', async () => {
      for (const path of ['/accounts/me', '/accounts/me/api-keys', '/pets', `/store/inventory/${petId}`]) {
        expect({ path, status: (await api.get(path, { key: read })).status }).toEqual({ path, status: 200 });
      }
      // HEAD is not in the description (the contract check would refuse it): plain fetch.
      const head = await fetch(`${api.baseUrl}/pets`, { method: 'HEAD', headers: { authorization: `Bearer ${read}` } });
      expect(head.status).toBe(200);
    });

    it('cannot POST, PUT, PATCH or DELETE: 403 insufficient_scope naming full, and nothing changes', async () => {
      const { id: orderId } = (await store.order(full, { petId, quantity: 1 })).body;
      const writes: [string, string, object | undefined][] = [
        ['POST', '/store/orders', { petId, quantity: 1 }],
        ['POST', '/messages', { message: 'hello' }],
        ['POST', '/webhooks/endpoints', { url: 'https://example.com/hook', events: ['order.placed'] }],
        ['DELETE', `/store/orders/${orderId}`, undefined],
        ['DELETE', `/accounts/me/api-keys/${readId}`, undefined],
      ];
      for (const [method, path, body] of writes) {
        const response = await api.request(method, path, { key: read, body });
        expectError(response, 403, 'insufficient_scope');
        expect(response.body.message).toContain('`full`');
      }
      const [{ n }] = await api.sql(`SELECT count(*)::int AS n FROM orders`);
      expect(n).toBe(1);
      expect((await api.get(`/store/orders/${orderId}`, { key: read })).status).toBe(200);
      // Still open: the full key can cancel it.
      expect((await api.delete(`/store/orders/${orderId}`, { key: full })).status).toBe(204);
      expect((await api.get('/accounts/me', { key: read })).status).toBe(200); // not revoked
    });

    it('cannot create keys at all (a write), not even read ones: the error says a full key is needed', async () => {
      for (const body of [undefined, { scopes: ['read'] }, { scopes: ['full'] }]) {
        const response = await api.post('/accounts/me/api-keys', { key: read, body });
        expectError(response, 403, 'insufficient_scope');
        expect(response.body.message).toMatch(/needs an API key with the `full` scope; this key has `read`/);
      }
      const listed = await api.get('/accounts/me/api-keys', { key: full });
      expect(listed.body).toHaveLength(2);
    });

    it('a full key may create read and full keys (a key grants only scopes it has)', async () => {
      expect((await newKey(full, { scopes: ['read'] })).response.body.scopes).toEqual(['read']);
      expect((await newKey(full, { scopes: ['full'] })).response.body.scopes).toEqual(['full']);
      expect((await newKey(full, { scopes: ['read', 'full'] })).response.body.scopes).toEqual(['read', 'full']);
    });
  });

  describe("an administrator's read key", () => {
    let read: string;

    beforeAll(async () => {
      ({ key: read } = await newKey(ADMIN_KEY, { name: 'admin reader', scopes: ['read'] }));
    });

    it('reads what an administrator may read', async () => {
      expect((await api.get('/accounts/me', { key: read })).body.role).toBe('admin');
      expect((await api.get('/messages', { key: read })).status).toBe(200);
      expect((await api.get('/store/orders', { key: read })).status).toBe(200);
    });

    it('is not an administrator for writes: 403 insufficient_scope, the catalogue and stock unchanged', async () => {
      const petId = await store.pet({ quantity: 3 });
      const category = (await api.get(`/pets/${petId}`, { key: read })).body.categoryId;
      const writes: [string, string, object | undefined][] = [
        ['POST', '/categories', { name: 'Forbidden kind' }],
        ['POST', '/pets', { name: 'Intruder', categoryId: category }],
        ['PATCH', `/pets/${petId}`, { name: 'Renamed' }],
        ['PUT', `/store/inventory/${petId}`, { quantity: 100 }],
        ['DELETE', `/pets/${petId}`, undefined],
        ['DELETE', `/categories/${category}`, undefined],
      ];
      for (const [method, path, body] of writes) {
        expectError(await api.request(method, path, { key: read, body }), 403, 'insufficient_scope');
      }
      const pet = (await api.get(`/pets/${petId}`, { key: read })).body;
      expect(pet.name).toBe('Pet ' + pet.name.split(' ')[1]);
      expect((await api.get(`/store/inventory/${petId}`, { key: read })).body.quantity).toBe(3);
      const [{ n }] = await api.sql(`SELECT count(*)::int AS n FROM categories WHERE name = 'Forbidden kind'`);
      expect(n).toBe(0);
      // The same writes with the administrator's full key are allowed.
      expect((await api.patch(`/pets/${petId}`, { key: ADMIN_KEY, body: { name: 'Renamed' } })).status).toBe(200);
    });
  });

  it('describes the 403 on every write that needs a key, and the body of createApiKey', async () => {
    const document = (await api.get('/openapi.json')).body;
    for (const [path, item] of Object.entries<Record<string, { security?: unknown[]; responses: object }>>(
      document.paths,
    )) {
      for (const [method, operation] of Object.entries(item)) {
        if (!['post', 'put', 'patch', 'delete'].includes(method) || !operation.security?.length) continue;
        expect({ path, method, has403: '403' in operation.responses }).toEqual({ path, method, has403: true });
      }
    }
    const create = document.paths['/accounts/me/api-keys'].post;
    expect(create.requestBody).toMatchObject({
      required: false,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/NewApiKey' } } },
    });
    expect(Object.keys(document.components.schemas.NewApiKey.properties).sort()).toEqual([
      'expiresAt',
      'name',
      'scopes',
    ]);
  });

  it('the typed client sends the body and gets the new code', async () => {
    const { key } = await api.customer('Client user');
    const client = createPetstoreClient({ baseUrl: api.baseUrl, apiKey: key });
    const { data: created } = await client.POST('/accounts/me/api-keys', {
      body: { name: 'from the client', scopes: ['read'], expiresAt: inDays(7) },
    });
    expect(created.scopes).toEqual(['read']);
    const readClient = createPetstoreClient({ baseUrl: api.baseUrl, apiKey: created.key });
    const { data: keys } = await readClient.GET('/accounts/me/api-keys');
    expect(keys.map((k) => k.name)).toEqual([null, 'from the client']);
    const refused = await readClient.POST('/accounts/me/api-keys', { body: { scopes: ['read'] } }).catch((e) => e);
    expect(refused).toBeInstanceOf(PetstoreApiError);
    expect(refused).toMatchObject({ status: 403, code: 'insufficient_scope' });
    // @ts-expect-error: the client knows the scopes there are.
    const unknownScope: Parameters<typeof client.POST<'/accounts/me/api-keys'>>[1] = { body: { scopes: ['admin'] } };
    expect(unknownScope).toBeDefined();
  });
});
