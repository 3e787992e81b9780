import { StoreFixtures, nextPage } from './support/store-fixtures';
import { ADMIN_KEY, TestApp, TestResponse, expectError } from './support/test-app';

const DAY_MS = 24 * 60 * 60 * 1000;
/** The service's additions to the specification's Order, always sent. */
/** The additions to the specification's Order (resource-versions.e2e.spec.ts holds how the version counts). */
const RECORD = { createdAt: expect.any(String), statusChangedAt: expect.any(String), version: expect.any(Number) };

describe('store orders (HTTP, real PostgreSQL)', () => {
  let api: TestApp;
  let store: StoreFixtures;
  let alice: string;
  let bob: string;
  let bobId: number;

  beforeAll(async () => {
    api = await TestApp.start();
    store = await StoreFixtures.on(api);
    alice = (await api.customer('Alice')).key;
    ({ key: bob, id: bobId } = await api.customer('Bob'));
  });
  afterAll(async () => {
    await store.close();
    await api.close();
  });

  /** The pet's InventoryItem, but its version (resource-versions.e2e.spec.ts holds how it counts). */
  const stockOf = async (petId: number) => {
    const { version, ...item } = (await api.get(`/store/inventory/${petId}`, { key: alice })).body;
    expect(version).toEqual(expect.any(Number));
    return item;
  };
  const complete = (orderId: number, body: unknown = { complete: true }) =>
    api.patch(`/store/orders/${orderId}`, { key: ADMIN_KEY, body });
  const cancel = (orderId: number, key = alice) => api.delete(`/store/orders/${orderId}`, { key });

  describe('lifecycle', () => {
    it("places an order (201, Location, the specification's Order shape) and takes the units from stock", async () => {
      const petId = await store.pet({ quantity: 5 });
      const placed = await store.order(alice, { petId, quantity: 2 });
      expect(placed.status).toBe(201);
      expect(placed.body).toEqual({
        id: expect.any(Number),
        petId,
        quantity: 2,
        complete: false,
        status: 'placed',
        ...RECORD,
      });
      expect(placed.body.statusChangedAt).toBe(placed.body.createdAt);
      expect(placed.headers.get('location')).toBe(`/store/orders/${placed.body.id}`);
      expect(await stockOf(petId)).toEqual({ petId, quantity: 3, status: 'available' });

      const read = await api.get(String(placed.headers.get('location')), { key: alice });
      expect(read.status).toBe(200);
      expect(read.body).toEqual(placed.body);
    });

    it('place the last units → pending at zero → complete → sold', async () => {
      const petId = await store.pet({ quantity: 3 });
      const first = await store.placed(alice, petId, 1);
      const second = await store.placed(bob, petId, 2);
      expect(await stockOf(petId)).toEqual({ petId, quantity: 0, status: 'pending' });

      // Another order remains open: the pet stays pending.
      const done = await complete(first);
      expect(done.status).toBe(200);
      expect(done.body).toEqual({
        id: first,
        petId,
        quantity: 1,
        complete: true,
        status: 'completed',
        shipDate: expect.any(String),
        ...RECORD,
      });
      expect(await stockOf(petId)).toEqual({ petId, quantity: 0, status: 'pending' });

      expect((await complete(second)).status).toBe(200);
      expect(await stockOf(petId)).toEqual({ petId, quantity: 0, status: 'sold' });
      expect(await store.ordersOf(petId)).toMatchObject({ open: 0, completed: 2, openUnits: 0, completedUnits: 3 });
    });

    it('completing sets the ship date: the completion time if none, else the given one, or the one sent', async () => {
      const petId = await store.pet({ quantity: 3 });
      const before = Date.now();
      const none = await complete(await store.placed(alice, petId));
      const shipped = Date.parse(none.body.shipDate);
      expect(shipped).toBeGreaterThanOrEqual(before - 1000);
      expect(shipped).toBeLessThanOrEqual(Date.now() + 1000);

      const expected = new Date(Date.now() + 3 * DAY_MS).toISOString();
      const withDate = await store.order(alice, { petId, quantity: 1, shipDate: expected });
      expect(withDate.body.shipDate).toBe(expected);
      expect((await complete(withDate.body.id)).body.shipDate).toBe(expected);

      const actual = '2020-01-02T03:04:05.000Z';
      const sent = await complete(await store.placed(alice, petId), { complete: true, shipDate: actual });
      expect(sent.body).toEqual(expect.objectContaining({ complete: true, shipDate: actual }));
    });

    it('cancel → the units go back once and a pending pet is available again; the order stays, cancelled', async () => {
      const petId = await store.pet({ quantity: 2 });
      const orderId = await store.placed(alice, petId, 2);
      expect(await stockOf(petId)).toEqual({ petId, quantity: 0, status: 'pending' });
      const placed = (await api.get(`/store/orders/${orderId}`, { key: alice })).body;

      expect((await cancel(orderId)).status).toBe(204);
      expect(await stockOf(petId)).toEqual({ petId, quantity: 2, status: 'available' });
      const read = await api.get(`/store/orders/${orderId}`, { key: alice });
      expect(read.status).toBe(200);
      const cancelled = { status: 'cancelled', statusChangedAt: expect.any(String), version: placed.version + 1 };
      expect(read.body).toEqual({ ...placed, ...cancelled });
      expect(Date.parse(read.body.statusChangedAt)).toBeGreaterThanOrEqual(Date.parse(placed.createdAt));
      expectError(await cancel(orderId), 409, 'order_already_cancelled');
      expectError(await cancel(orderId, ADMIN_KEY), 409, 'order_already_cancelled');
      expectError(await complete(orderId), 409, 'order_already_cancelled');
      expect(await stockOf(petId)).toEqual({ petId, quantity: 2, status: 'available' });
      expect(await store.ordersOf(petId)).toMatchObject({ open: 0, completed: 0, withdrawn: 1, withdrawnUnits: 2 });
    });

    it('lists filter by status (comma-separated or repeated); an unknown status is a 400', async () => {
      const petId = await store.pet({ quantity: 10 });
      const open = await store.placed(bob, petId, 1);
      const done = await store.placed(bob, petId, 1);
      const gone = await store.placed(bob, petId, 1);
      expect((await complete(done)).status).toBe(200);
      expect((await cancel(gone, bob)).status).toBe(204);
      const ids = async (query: string) =>
        (await api.get(`/store/orders?petId=${petId}&${query}`, { key: bob })).body.map((o: { id: number }) => o.id);
      expect(await ids('status=placed')).toEqual([open]);
      expect(await ids('status=cancelled,completed')).toEqual([done, gone]);
      expect(await ids('status=cancelled&status=expired')).toEqual([gone]);
      // `complete` is the specification's field: false is every order not fulfilled.
      expect(await ids('complete=false')).toEqual([open, gone]);
      expectError(await api.get('/store/orders?status=lost', { key: bob }), 400, 'validation_failed');
    });

    it('restock → a sold pet is available again and can be ordered', async () => {
      const petId = await store.pet();
      await complete(await store.placed(alice, petId, 1));
      expect(await stockOf(petId)).toEqual({ petId, quantity: 0, status: 'sold' });
      expectError(await store.order(alice, { petId, quantity: 1 }), 409, 'pet_not_available');

      const restocked = await api.put(`/store/inventory/${petId}`, { key: ADMIN_KEY, body: { quantity: 4 } });
      expect(restocked.body).toEqual({ petId, quantity: 4, status: 'available', version: expect.any(Number) });
      expect((await store.order(alice, { petId, quantity: 4 })).status).toBe(201);
      expect(await stockOf(petId)).toEqual({ petId, quantity: 0, status: 'pending' });
    });

    it("an administrator may cancel a customer's order; a held pet with stock becomes available", async () => {
      const petId = await store.pet({ quantity: 3 });
      const orderId = await store.placed(alice, petId, 1);
      expect((await api.patch(`/pets/${petId}`, { key: ADMIN_KEY, body: { status: 'pending' } })).status).toBe(200);
      expect((await cancel(orderId, ADMIN_KEY)).status).toBe(204);
      expect(await stockOf(petId)).toEqual({ petId, quantity: 3, status: 'available' });
    });
  });

  describe('refusals change nothing', () => {
    let petId: number;
    beforeAll(async () => {
      petId = await store.pet({ quantity: 3 });
    });

    async function expectUnchanged(action: () => Promise<TestResponse>, status: number, code: string) {
      const [stock, orders] = [await store.stock(petId), await store.orderCount()];
      expectError(await action(), status, code);
      expect(await store.stock(petId)).toEqual(stock);
      expect(await store.orderCount()).toBe(orders);
    }

    it('an unknown pet is 422 unknown_pet', async () => {
      await expectUnchanged(() => store.order(alice, { petId: 987654321, quantity: 1 }), 422, 'unknown_pet');
    });

    it('more units than in stock is 409 insufficient_stock', async () => {
      await expectUnchanged(() => store.order(alice, { petId, quantity: 4 }), 409, 'insufficient_stock');
    });

    it.each(['pending', 'sold'] as const)('a %s pet is 409 pet_not_available', async (status) => {
      const other = await store.pet({ status });
      const orders = await store.orderCount();
      expectError(await store.order(alice, { petId: other, quantity: 1 }), 409, 'pet_not_available');
      expect(await store.stock(other)).toEqual({ quantity: 0, status });
      expect(await store.orderCount()).toBe(orders);
    });

    it('a held pet with stock is 409 pet_not_available', async () => {
      const held = await store.pet({ quantity: 5 });
      expect((await api.patch(`/pets/${held}`, { key: ADMIN_KEY, body: { status: 'pending' } })).status).toBe(200);
      expectError(await store.order(alice, { petId: held, quantity: 1 }), 409, 'pet_not_available');
      expect(await store.stock(held)).toEqual({ quantity: 5, status: 'pending' });
    });

    const without = (field: string) => (body: Record<string, unknown>) => {
      const copy = { ...body };
      delete copy[field];
      return copy;
    };
    const withField = (fields: Record<string, unknown>) => (body: Record<string, unknown>) => ({ ...body, ...fields });

    it.each([
      ['an empty object', () => ({})],
      ['no quantity', without('quantity')],
      ['no petId', without('petId')],
      ['quantity 0', withField({ quantity: 0 })],
      ['quantity 1001', withField({ quantity: 1001 })],
      ['quantity -1', withField({ quantity: -1 })],
      ['a fractional quantity', withField({ quantity: 1.5 })],
      ['a string quantity', withField({ quantity: '1' })],
      ['a null quantity', withField({ quantity: null })],
      ['petId 0', withField({ petId: 0 })],
      ['a string petId', withField({ petId: '1' })],
      ['a null petId', withField({ petId: null })],
      ['a petId beyond 2^53', withField({ petId: 2 ** 53 + 2 })],
      ['a date-only shipDate', withField({ shipDate: '2030-01-01' })],
      ['a shipDate without time zone', withField({ shipDate: '2030-01-01T10:00:00' })],
      ['an impossible shipDate', withField({ shipDate: '2030-02-30T10:00:00Z' })],
      ['a numeric shipDate', withField({ shipDate: 1893456000000 })],
      ['a null shipDate', withField({ shipDate: null })],
      ['a shipDate two days ago', withField({ shipDate: new Date(Date.now() - 2 * DAY_MS).toISOString() })],
      ['an id', withField({ id: 5 })],
      ['complete', withField({ complete: true })],
      ['an unknown field', withField({ colour: 'red' })],
    ])('%s is 400 validation_failed', async (_, make) => {
      await expectUnchanged(() => store.order(alice, make({ petId, quantity: 1 })), 400, 'validation_failed');
    });

    it('names the field in details', async () => {
      const response = await store.order(alice, { petId, quantity: 0, shipDate: 'soon' });
      expect(response.body.details).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ field: 'quantity' }),
          expect.objectContaining({ field: 'shipDate' }),
        ]),
      );
      const past = await store.order(alice, {
        petId,
        quantity: 1,
        shipDate: new Date(Date.now() - 2 * DAY_MS).toISOString(),
      });
      expect(past.body.details).toEqual([expect.objectContaining({ field: 'shipDate' })]);
    });

    it.each([
      ['an array', [{ petId: 1, quantity: 1 }]],
      ['a string', 'order'],
    ])('a body that is %s is 400', async (_, body) => {
      await expectUnchanged(() => store.order(alice, body), 400, 'validation_failed');
    });

    it('accepts a ship date up to a day in the past, and the largest quantity (1,000) when in stock', async () => {
      const big = await store.pet({ quantity: 1000 });
      const shipDate = new Date(Date.now() - DAY_MS + 60_000).toISOString();
      const placed = await store.order(alice, { petId: big, quantity: 1000, shipDate });
      expect(placed.status).toBe(201);
      expect(placed.body).toEqual(expect.objectContaining({ quantity: 1000, shipDate }));
    });

    it('normalises a ship date with an offset to UTC', async () => {
      const placed = await store.order(alice, { petId, quantity: 1, shipDate: '2030-06-01T12:00:00+02:00' });
      expect(placed.body.shipDate).toBe('2030-06-01T10:00:00.000Z');
      expect((await cancel(placed.body.id)).status).toBe(204);
    });

    it('completing twice, or cancelling a completed order, is 409 order_already_complete', async () => {
      const orderId = await store.placed(alice, petId);
      expect((await complete(orderId)).status).toBe(200);
      const before = await store.stock(petId);
      expectError(await complete(orderId), 409, 'order_already_complete');
      expectError(await cancel(orderId), 409, 'order_already_complete');
      expectError(await cancel(orderId, ADMIN_KEY), 409, 'order_already_complete');
      expect(await store.stock(petId)).toEqual(before);
      expect((await api.get(`/store/orders/${orderId}`, { key: alice })).body.complete).toBe(true);
    });

    it.each([
      ['complete: false on an open order', { complete: false }],
      ['no complete', {}],
      ['only a shipDate', { shipDate: '2030-01-01T00:00:00Z' }],
      ['complete as a string', { complete: 'true' }],
      ['a bad shipDate', { complete: true, shipDate: 'tomorrow' }],
      ['an unknown field', { complete: true, quantity: 3 }],
    ])('PATCH with %s is 400 and leaves the order open', async (_, body) => {
      const orderId = await store.placed(alice, petId);
      expectError(await complete(orderId, body), 400, 'validation_failed');
      expect((await api.get(`/store/orders/${orderId}`, { key: alice })).body.complete).toBe(false);
      expect((await cancel(orderId)).status).toBe(204);
    });

    it('PATCH complete: false on a completed order is 400 too (never reopened)', async () => {
      const orderId = await store.placed(alice, petId);
      await complete(orderId);
      expectError(await complete(orderId, { complete: false }), 400, 'validation_failed');
      expect((await api.get(`/store/orders/${orderId}`, { key: alice })).body.complete).toBe(true);
    });

    it('a cancel that would lift the stock above 2,147,483,647 is 409 stock_limit_exceeded', async () => {
      const pet = await store.pet({ quantity: 2 });
      const orderId = await store.placed(alice, pet, 2);
      await store.setStock(pet, 2_147_483_647);
      expectError(await cancel(orderId), 409, 'stock_limit_exceeded');
      expect(await store.stock(pet)).toEqual({ quantity: 2_147_483_647, status: 'available' });
      expect((await api.get(`/store/orders/${orderId}`, { key: alice })).status).toBe(200);
    });

    it('unknown orders are 404, bad ids 400', async () => {
      expectError(await api.get('/store/orders/99999999', { key: alice }), 404, 'not_found');
      expectError(await complete(99999999), 404, 'not_found');
      expectError(await cancel(99999999), 404, 'not_found');
      expectError(await api.get('/store/orders/9223372036854775807', { key: alice }), 404, 'not_found');
      for (const id of ['abc', '0', '-1', '1.5', '9223372036854775808']) {
        expectError(await api.get(`/store/orders/${id}`, { key: alice }), 400, 'validation_failed');
        expectError(await cancel(id as unknown as number), 400, 'validation_failed');
      }
    });
  });

  describe('whose orders', () => {
    let petId: number;
    let alicesOrder: number;
    beforeAll(async () => {
      petId = await store.pet({ quantity: 10 });
      alicesOrder = await store.placed(alice, petId, 2);
    });

    it('another customer can neither read nor cancel it (404) nor complete it (403); nothing changes', async () => {
      const before = await store.stock(petId);
      expectError(await api.get(`/store/orders/${alicesOrder}`, { key: bob }), 404, 'not_found');
      expectError(await cancel(alicesOrder, bob), 404, 'not_found');
      expectError(
        await api.patch(`/store/orders/${alicesOrder}`, { key: bob, body: { complete: true } }),
        403,
        'forbidden',
      );
      expectError(
        await api.patch(`/store/orders/${alicesOrder}`, { key: alice, body: { complete: true } }),
        403,
        'forbidden',
      );
      expect(await store.stock(petId)).toEqual(before);
      const own = await api.get(`/store/orders/${alicesOrder}`, { key: alice });
      expect(own.body).toEqual({ id: alicesOrder, petId, quantity: 2, complete: false, status: 'placed', ...RECORD });
    });

    it("another customer's completed order is also a 404, not a 409", async () => {
      const orderId = await store.placed(alice, petId);
      await complete(orderId);
      expectError(await cancel(orderId, bob), 404, 'not_found');
    });

    it('a customer lists only its own orders; an administrator all', async () => {
      const bobsOrder = await store.placed(bob, petId, 1);
      const mine = await api.get('/store/orders?limit=100', { key: bob });
      expect(mine.status).toBe(200);
      expect(mine.body.length).toBeGreaterThan(0);
      expect(mine.body.map((o: { id: number }) => o.id)).toContain(bobsOrder);
      expect(mine.body.map((o: { id: number }) => o.id)).not.toContain(alicesOrder);
      const { rows } = await store.db.query('SELECT count(*)::int AS n FROM orders WHERE owner_id = $1', [bobId]);
      expect(mine.body).toHaveLength(rows[0].n);

      const all = await api.get(`/store/orders?petId=${petId}&limit=100`, { key: ADMIN_KEY });
      expect(all.body.map((o: { id: number }) => o.id)).toEqual(expect.arrayContaining([alicesOrder, bobsOrder]));
    });

    it('every request needs a key (401)', async () => {
      expectError(await api.get('/store/orders'), 401, 'unauthorized');
      expectError(await api.post('/store/orders', { body: { petId, quantity: 1 } }), 401, 'unauthorized');
      expectError(await api.get(`/store/orders/${alicesOrder}`), 401, 'unauthorized');
      expectError(await api.delete(`/store/orders/${alicesOrder}`), 401, 'unauthorized');
    });
  });

  describe('pets with open orders', () => {
    it('with open orders is 409 pet_has_open_orders; once complete the pet goes, its orders stay', async () => {
      const petId = await store.pet({ quantity: 2 });
      const orderId = await store.placed(alice, petId, 1);
      expectError(await api.delete(`/pets/${petId}`, { key: ADMIN_KEY }), 409, 'pet_has_open_orders');
      expect(await store.stock(petId)).toEqual({ quantity: 1, status: 'available' });

      await complete(orderId);
      expect((await api.delete(`/pets/${petId}`, { key: ADMIN_KEY })).status).toBe(204);
      const history = await api.get(`/store/orders/${orderId}`, { key: alice });
      expect(history.status).toBe(200);
      expect(history.body).toEqual({
        id: orderId,
        quantity: 1,
        complete: true,
        status: 'completed',
        shipDate: expect.any(String),
        ...RECORD,
      });
      expectError(await cancel(orderId), 409, 'order_already_complete');
      expectError(await api.get(`/store/inventory/${petId}`, { key: alice }), 404, 'not_found');
    });

    it('a pet with open orders cannot be marked sold by hand (409 invalid_status_transition), else can', async () => {
      const petId = await store.pet({ quantity: 3 });
      const orderId = await store.placed(alice, petId, 1);
      expectError(
        await api.patch(`/pets/${petId}`, { key: ADMIN_KEY, body: { status: 'sold' } }),
        409,
        'invalid_status_transition',
      );
      expect(await store.stock(petId)).toEqual({ quantity: 2, status: 'available' });
      await complete(orderId);
      expect((await api.patch(`/pets/${petId}`, { key: ADMIN_KEY, body: { status: 'sold' } })).status).toBe(200);
      expect(await store.stock(petId)).toEqual({ quantity: 0, status: 'sold' });
    });

    it('cancelled orders do not hold a pet back', async () => {
      const petId = await store.pet({ quantity: 2 });
      await cancel(await store.placed(alice, petId, 1));
      expect((await api.delete(`/pets/${petId}`, { key: ADMIN_KEY })).status).toBe(204);
    });
  });
});

describe('order lists (HTTP, real PostgreSQL)', () => {
  let api: TestApp;
  let store: StoreFixtures;
  let carol: string;
  let dogs: number;
  let cats: number;
  const ids: { dogs: number[]; cats: number[]; done: number[] } = { dogs: [], cats: [], done: [] };

  beforeAll(async () => {
    api = await TestApp.start();
    store = await StoreFixtures.on(api);
    carol = (await api.customer('Carol')).key;
    dogs = await store.pet({ quantity: 20 });
    cats = await store.pet({ quantity: 20 });
    for (let i = 0; i < 4; i++) ids.dogs.push(await store.placed(carol, dogs));
    for (let i = 0; i < 3; i++) ids.cats.push(await store.placed(carol, cats));
    for (const id of [ids.dogs[1], ids.cats[0]]) {
      await api.patch(`/store/orders/${id}`, { key: ADMIN_KEY, body: { complete: true } });
      ids.done.push(id);
    }
  });
  afterAll(async () => {
    await store.close();
    await api.close();
  });

  const listIds = async (query: string) => {
    const response = await api.get(`/store/orders${query}`, { key: carol });
    expect(response.status).toBe(200);
    return response.body.map((o: { id: number }) => o.id);
  };

  it('filters by petId and by complete, in id order', async () => {
    expect(await listIds(`?petId=${dogs}`)).toEqual(ids.dogs);
    expect(await listIds(`?petId=${cats}&complete=true`)).toEqual([ids.cats[0]]);
    expect(await listIds('?complete=true')).toEqual([...ids.done].sort((a, b) => a - b));
    const open = [...ids.dogs, ...ids.cats].filter((id) => !ids.done.includes(id));
    expect(await listIds('?complete=false')).toEqual(open);
    expect(await listIds('?petId=123456789')).toEqual([]);
    // A valid int64 the service never issues (beyond 2^53) matches nothing rather than a rounded id.
    expect(await listIds('?petId=9223372036854775807')).toEqual([]);
  });

  it('walks the pages with Link: rel="next", keeping the filters', async () => {
    const seen: number[] = [];
    let next: string | null = `/store/orders?petId=${dogs}&limit=3`;
    let pages = 0;
    while (next) {
      const page: TestResponse = await api.get(next, { key: carol });
      seen.push(...page.body.map((o: { id: number }) => o.id));
      next = nextPage(page);
      if (next) expect(next).toContain(`petId=${dogs}`);
      pages++;
    }
    expect(pages).toBe(2);
    expect(seen).toEqual(ids.dogs);
  });

  it.each([
    'complete=yes',
    'complete=',
    'petId=abc',
    'petId=0',
    'petId=-3',
    'petId=9223372036854775808',
    'limit=0',
    'limit=101',
    'cursor=nope',
    'owner=1',
  ])('refuses %s (400)', async (query) => {
    expectError(await api.get(`/store/orders?${query}`, { key: carol }), 400, 'validation_failed');
  });
});
