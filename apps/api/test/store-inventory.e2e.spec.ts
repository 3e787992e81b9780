import { StoreFixtures, nextPage } from './support/store-fixtures';
import { ADMIN_KEY, TestApp, TestResponse, expectError } from './support/test-app';

describe('store inventory (HTTP, real PostgreSQL)', () => {
  let api: TestApp;
  let store: StoreFixtures;
  let customer: string;

  beforeAll(async () => {
    api = await TestApp.start();
    store = await StoreFixtures.on(api);
    customer = (await api.customer()).key;
  });
  afterAll(async () => {
    await store.close();
    await api.close();
  });

  const read = (petId: number | string, key = customer) => api.get(`/store/inventory/${petId}`, { key });
  const put = (petId: number | string, body: unknown, key = ADMIN_KEY) =>
    api.put(`/store/inventory/${petId}`, { key, body });

  it.each([
    ['without a status', undefined, 1, 'available'],
    ['available', 'available', 1, 'available'],
    ['pending', 'pending', 0, 'pending'],
    ['sold', 'sold', 0, 'sold'],
  ] as const)('a pet created %s has %i unit(s) and shows its status', async (_, status, quantity, shown) => {
    const petId = await store.pet({ status });
    const response = await read(petId);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ petId, quantity, status: shown, version: 1 });
  });

  describe('PUT sets the stock; the status follows "Set stock"', () => {
    it('n > 0 makes any pet available', async () => {
      for (const status of ['available', 'pending', 'sold'] as const) {
        const petId = await store.pet({ status });
        const response = await put(petId, { quantity: 7 });
        expect(response.status).toBe(200);
        // Its quantity changed, and its status unless it was available: each a change of the entry.
        const version = status === 'available' ? 2 : 3;
        expect(response.body).toEqual({ petId, quantity: 7, status: 'available', version });
        expect(await store.stock(petId)).toEqual({ quantity: 7, status: 'available' });
      }
    });

    it('0 on an available pet without open orders: sold', async () => {
      const petId = await store.pet({ quantity: 4 });
      const { version } = (await read(petId)).body;
      const sold = { petId, quantity: 0, status: 'sold', version: version + 2 };
      expect((await put(petId, { quantity: 0 })).body).toEqual(sold);
    });

    it('0 on an available pet with open orders: pending (the orders can still be completed or cancelled)', async () => {
      const petId = await store.pet({ quantity: 4 });
      const orderId = await store.placed(customer, petId, 1);
      const { version } = (await read(petId)).body;
      const pending = { petId, quantity: 0, status: 'pending', version: version + 2 };
      expect((await put(petId, { quantity: 0 })).body).toEqual(pending);
      expect((await api.patch(`/store/orders/${orderId}`, { key: ADMIN_KEY, body: { complete: true } })).status).toBe(
        200,
      );
      expect((await read(petId)).body).toEqual({ petId, quantity: 0, status: 'sold', version: version + 3 });
    });

    it.each(['pending', 'sold'] as const)('0 on a %s pet keeps its status', async (status) => {
      const petId = await store.pet({ status });
      // The same count, the same status: nothing changed, nor did the version.
      expect((await put(petId, { quantity: 0 })).body).toEqual({ petId, quantity: 0, status, version: 1 });
    });

    it('accepts the largest count, 2,147,483,647', async () => {
      const petId = await store.pet();
      expect((await put(petId, { quantity: 2_147_483_647 })).body).toEqual({
        petId,
        quantity: 2_147_483_647,
        status: 'available',
        version: 2,
      });
    });

    it.each([
      ['no quantity', {}],
      ['-1', { quantity: -1 }],
      ['2,147,483,648', { quantity: 2_147_483_648 }],
      ['1.5', { quantity: 1.5 }],
      ['a string', { quantity: '3' }],
      ['null', { quantity: null }],
      ['an unknown field', { quantity: 3, status: 'sold' }],
      ['an array body', [{ quantity: 3 }]],
    ])('refuses %s (400) and changes nothing', async (_, body) => {
      const petId = await store.pet({ quantity: 2 });
      expectError(await put(petId, body), 400, 'validation_failed');
      expect(await store.stock(petId)).toEqual({ quantity: 2, status: 'available' });
    });

    it('is for administrators (403), with a key (401)', async () => {
      const petId = await store.pet({ quantity: 2 });
      expectError(await put(petId, { quantity: 9 }, customer), 403, 'forbidden');
      expectError(await api.put(`/store/inventory/${petId}`, { body: { quantity: 9 } }), 401, 'unauthorized');
      expect(await store.stock(petId)).toEqual({ quantity: 2, status: 'available' });
    });
  });

  it('an unknown pet is 404, a bad id 400', async () => {
    expectError(await read(123456789), 404, 'not_found');
    expectError(await put(123456789, { quantity: 1 }), 404, 'not_found');
    expectError(await read('9223372036854775807'), 404, 'not_found');
    for (const id of ['abc', '0', '-2', '2.5', '9223372036854775808']) {
      expectError(await read(id), 400, 'validation_failed');
      expectError(await put(id, { quantity: 1 }), 400, 'validation_failed');
    }
    expectError(await api.get('/store/inventory/1'), 401, 'unauthorized');
  });
});

describe('inventory list (HTTP, real PostgreSQL)', () => {
  let api: TestApp;
  let store: StoreFixtures;
  let customer: string;
  const pets: Record<'available' | 'pending' | 'sold', number[]> = { available: [], pending: [], sold: [] };

  beforeAll(async () => {
    api = await TestApp.start();
    store = await StoreFixtures.on(api);
    customer = (await api.customer()).key;
    for (const status of ['available', 'pending', 'sold', 'available', 'available', 'pending', 'available'] as const) {
      pets[status].push(await store.pet({ status, quantity: status === 'available' ? 3 : undefined }));
    }
  });
  afterAll(async () => {
    await store.close();
    await api.close();
  });

  const list = (query: string) => api.get(`/store/inventory${query}`, { key: customer });
  const all = () => [...pets.available, ...pets.pending, ...pets.sold].sort((a, b) => a - b);

  it('lists every entry in pet id order, with quantities and statuses', async () => {
    const response = await list('');
    expect(response.status).toBe(200);
    expect(response.body.map((i: { petId: number }) => i.petId)).toEqual(all());
    const item = (petId: number | undefined, quantity: number, status: string) =>
      expect.objectContaining({ petId, quantity, status, version: expect.any(Number) });
    expect(response.body).toContainEqual(item(pets.available[0], 3, 'available'));
    expect(response.body).toContainEqual(item(pets.sold[0], 0, 'sold'));
    expect(response.headers.get('link')).toBeNull();
  });

  it('filters by status, repeated or comma-separated', async () => {
    expect((await list('?status=pending')).body.map((i: { petId: number }) => i.petId)).toEqual(pets.pending);
    const twice = (await list('?status=pending&status=sold')).body.map((i: { petId: number }) => i.petId);
    const comma = (await list('?status=pending,sold')).body.map((i: { petId: number }) => i.petId);
    expect(twice).toEqual([...pets.pending, ...pets.sold].sort((a, b) => a - b));
    expect(comma).toEqual(twice);
  });

  it('walks the pages by pet id with Link: rel="next", keeping the filter', async () => {
    const seen: number[] = [];
    let next: string | null = '/store/inventory?status=available&limit=3';
    let pages = 0;
    while (next) {
      const page: TestResponse = await list(next.replace('/store/inventory', ''));
      seen.push(...page.body.map((i: { petId: number }) => i.petId));
      next = nextPage(page);
      if (next) expect(next).toContain('status=available');
      pages++;
    }
    expect(pages).toBe(2);
    expect(seen).toEqual(pets.available);
  });

  it.each(['status=lost', 'status=', 'status=available,nope', 'limit=0', 'limit=abc', 'cursor=xyz', 'petId=1'])(
    'refuses %s (400)',
    async (query) => {
      expectError(await list(`?${query}`), 400, 'validation_failed');
    },
  );
});
