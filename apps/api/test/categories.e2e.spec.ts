import { ADMIN_KEY, TestApp, TestResponse, expectError } from './support/test-app';

describe('categories (HTTP, real PostgreSQL)', () => {
  let api: TestApp;
  let customer: string;

  beforeAll(async () => {
    api = await TestApp.start();
    customer = (await api.customer()).key;
  });
  afterAll(() => api.close());

  const create = (body: unknown) => api.post('/categories', { key: ADMIN_KEY, body });

  it('creates a category with Location, reads it back, trims the name', async () => {
    const created = await create({ name: '  Dogs ', description: 'Loyal' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.any(Number), name: 'Dogs', description: 'Loyal', version: 1 });
    expect(created.headers.get('location')).toBe(`/categories/${created.body.id}`);

    const read = await api.get(created.headers.get('location')!, { key: customer });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
  });

  it('omits an absent description', async () => {
    const created = await create({ name: 'Fish' });
    expect(created.body).toEqual({ id: expect.any(Number), name: 'Fish', version: 1 });
  });

  it('refuses a name taken in any letter case (409), on create and on rename', async () => {
    await create({ name: 'Birds' });
    expectError(await create({ name: 'BIRDS' }), 409, 'category_name_taken');
    const other = await create({ name: 'Reptiles' });
    expectError(
      await api.patch(`/categories/${other.body.id}`, { key: ADMIN_KEY, body: { name: 'birds' } }),
      409,
      'category_name_taken',
    );
  });

  it('gives one winner when the same name is created concurrently', async () => {
    const responses = await Promise.all(Array.from({ length: 10 }, () => create({ name: 'Racing hamsters' })));
    expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
    expect(responses.filter((r) => r.status === 409 && r.body.code === 'category_name_taken')).toHaveLength(9);
  });

  it.each([
    ['no name', {}],
    ['an empty name', { name: '' }],
    ['a blank name', { name: '  ' }],
    ['a 101-character name', { name: 'x'.repeat(101) }],
    ['a numeric name', { name: 12 }],
    ['a 1001-character description', { name: 'Ok', description: 'd'.repeat(1001) }],
    ['an id', { id: 5, name: 'Ok' }],
    ['an unknown field', { name: 'Ok', colour: 'red' }],
    ['an array body', [{ name: 'Ok' }]],
    ['a string body', 'Ok'],
  ])('refuses %s (400 validation_failed) and creates nothing', async (_, body) => {
    const before = await api.get('/categories?limit=100', { key: customer });
    const response = await create(body);
    expectError(response, 400, 'validation_failed');
    const after = await api.get('/categories?limit=100', { key: customer });
    expect(after.body).toEqual(before.body);
  });

  it('accepts a 100-character name and a 1000-character description', async () => {
    const created = await create({ name: 'n'.repeat(100), description: 'd'.repeat(1000) });
    expect(created.status).toBe(201);
  });

  it('names each invalid field in details', async () => {
    const response = await create({ name: 7, extra: true });
    expect(response.body.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: 'name' }),
        expect.objectContaining({ field: 'extra', message: 'extra is not a known field' }),
      ]),
    );
  });

  it('updates partially and removes a description with null', async () => {
    const created = await create({ name: 'Insects', description: 'Small' });
    const renamed = await api.patch(`/categories/${created.body.id}`, { key: ADMIN_KEY, body: { name: 'Bugs' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ id: created.body.id, name: 'Bugs', description: 'Small', version: 2 });
    const cleared = await api.patch(`/categories/${created.body.id}`, { key: ADMIN_KEY, body: { description: null } });
    expect(cleared.body).toEqual({ id: created.body.id, name: 'Bugs', version: 3 });
    expectError(
      await api.patch(`/categories/${created.body.id}`, { key: ADMIN_KEY, body: { name: '' } }),
      400,
      'validation_failed',
    );
    expectError(
      await api.patch(`/categories/${created.body.id}`, { key: ADMIN_KEY, body: { name: null } }),
      400,
      'validation_failed',
    );
    expectError(await api.patch('/categories/999999', { key: ADMIN_KEY, body: { name: 'Nope' } }), 404, 'not_found');
  });

  it('deletes a category (204) and then answers 404', async () => {
    const created = await create({ name: 'Temporary' });
    expect((await api.delete(`/categories/${created.body.id}`, { key: ADMIN_KEY })).status).toBe(204);
    expectError(await api.get(`/categories/${created.body.id}`, { key: customer }), 404, 'not_found');
    expectError(await api.delete(`/categories/${created.body.id}`, { key: ADMIN_KEY }), 404, 'not_found');
  });

  it.each(['abc', '0', '-1', '1.5', '9223372036854775808', '1e3'])('refuses the path id %s (400)', async (id) => {
    expectError(await api.get(`/categories/${id}`, { key: customer }), 400, 'validation_failed');
  });

  it('answers 404 for a valid id that does not exist, even beyond 2^53', async () => {
    expectError(await api.get('/categories/123456789', { key: customer }), 404, 'not_found');
    expectError(await api.get('/categories/9223372036854775807', { key: customer }), 404, 'not_found');
  });

  it('keeps administrator operations to administrators (403) and all to key holders (401)', async () => {
    const created = await create({ name: 'Guarded' });
    expectError(await api.post('/categories', { key: customer, body: { name: 'X' } }), 403, 'forbidden');
    expectError(
      await api.patch(`/categories/${created.body.id}`, { key: customer, body: { name: 'X' } }),
      403,
      'forbidden',
    );
    expectError(await api.delete(`/categories/${created.body.id}`, { key: customer }), 403, 'forbidden');
    expectError(await api.get('/categories'), 401, 'unauthorized');
    expectError(await api.get(`/categories/${created.body.id}`), 401, 'unauthorized');
  });
});

describe('category pagination (HTTP, real PostgreSQL)', () => {
  let api: TestApp;

  beforeAll(async () => {
    api = await TestApp.start();
    for (let i = 1; i <= 7; i++) await api.post('/categories', { key: ADMIN_KEY, body: { name: `Kind ${i}` } });
  });
  afterAll(() => api.close());

  it('walks 7 categories 3 at a time, each exactly once, in id order', async () => {
    const seen: number[] = [];
    let next: string | null = '/categories?limit=3';
    let pages = 0;
    while (next) {
      const page: TestResponse = await api.get(next, { key: ADMIN_KEY });
      expect(page.status).toBe(200);
      seen.push(...page.body.map((c: { id: number }) => c.id));
      const link: string | null = page.headers.get('link');
      next = link ? /^<([^>]+)>; rel="next"$/.exec(link)![1] : null;
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen).toHaveLength(7);
    expect(new Set(seen).size).toBe(7);
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);
  });

  it('defaults to 20 items and has no Link on the last page', async () => {
    const page = await api.get('/categories', { key: ADMIN_KEY });
    expect(page.body).toHaveLength(7);
    expect(page.headers.get('link')).toBeNull();
  });

  it('is stable under inserts: a new category appears at the end, none repeats', async () => {
    const first = await api.get('/categories?limit=3', { key: ADMIN_KEY });
    await api.post('/categories', { key: ADMIN_KEY, body: { name: 'Kind 8' } });
    const nextUrl = /^<([^>]+)>/.exec(first.headers.get('link')!)![1];
    const second = await api.get(nextUrl, { key: ADMIN_KEY });
    const firstIds = first.body.map((c: { id: number }) => c.id);
    expect(second.body.every((c: { id: number }) => !firstIds.includes(c.id))).toBe(true);
  });

  it.each(['limit=0', 'limit=101', 'limit=abc', 'limit=1.5', 'cursor=bogus', 'cursor=eyJhZnRlciI6LTF9', 'unknown=1'])(
    'refuses %s (400)',
    async (query) => {
      expectError(await api.get(`/categories?${query}`, { key: ADMIN_KEY }), 400, 'validation_failed');
    },
  );

  it('tells a limit that is not a number its type alone, not the two bounds it cannot be measured by', async () => {
    const response = await api.get('/categories?limit=abc', { key: ADMIN_KEY });
    expectError(response, 400, 'validation_failed');
    expect(response.body.details).toEqual([{ field: 'limit', message: 'limit must be an integer number' }]);
  });
});
