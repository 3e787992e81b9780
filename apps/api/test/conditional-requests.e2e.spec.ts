import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { StoreFixtures } from './support/store-fixtures';
import { eventually } from './support/eventually';
import { ADMIN_KEY, TestApp, TestResponse, expectError } from './support/test-app';

const admin = { key: ADMIN_KEY };
const TAG = /^"[A-Za-z0-9_-]{22}"$/;
const etagOf = (response: TestResponse) => response.headers.get('etag') as string;

/** Conditional requests (RFC 9110, 13): ETag, If-None-Match → 304, If-Match → 412. */
describe('conditional requests (HTTP, real PostgreSQL)', () => {
  let api: TestApp;
  let store: StoreFixtures;

  beforeAll(async () => {
    api = await TestApp.start({ webhooks: { allowPrivate: true } });
    store = await StoreFixtures.on(api);
  });
  afterAll(async () => {
    await store.close();
    await api.close();
  });

  const newCategory = async (name = `Kind ${randomUUID()}`) => {
    const created = await api.post('/categories', { ...admin, body: { name } });
    expect(created.status).toBe(201);
    return created.body.id as number;
  };

  describe('ETag and If-None-Match on every single-resource GET', () => {
    it('sends a strong ETag that stays while the representation does and changes when it changes', async () => {
      const petId = await store.pet();
      const first = await api.get(`/pets/${petId}`, admin);
      expect(first.status).toBe(200);
      expect(etagOf(first)).toMatch(TAG);
      expect(etagOf(await api.get(`/pets/${petId}`, admin))).toBe(etagOf(first));

      const renamed = await api.patch(`/pets/${petId}`, { ...admin, body: { name: 'Renamed' } });
      expect(renamed.status).toBe(200);
      // The PATCH answers the new representation with its tag: the one a GET now sends.
      const after = await api.get(`/pets/${petId}`, admin);
      expect(etagOf(after)).not.toBe(etagOf(first));
      expect(etagOf(renamed)).toBe(etagOf(after));
      // Back to the same name: another tag all the same, for the body shows the version, which counted the change
      // (an If-Match made from the first read no longer matches: A → B → A is not missed).
      const back = await api.patch(`/pets/${petId}`, { ...admin, body: { name: first.body.name } });
      expect(back.body).toEqual({ ...first.body, version: first.body.version + 2 });
      expect(etagOf(await api.get(`/pets/${petId}`, admin))).not.toBe(etagOf(first));
      expect(etagOf(await api.get(`/pets/${petId}`, admin))).toBe(etagOf(back));
    });

    it('answers 304 without a body, with the ETag, when If-None-Match lists the tag, is a list or *', async () => {
      const petId = await store.pet();
      const tag = etagOf(await api.get(`/pets/${petId}`, admin));
      for (const value of [tag, `"nope", ${tag}`, `W/${tag}`, '*']) {
        const response = await api.get(`/pets/${petId}`, { ...admin, headers: { 'if-none-match': value } });
        expect({ value, status: response.status, text: response.text }).toEqual({ value, status: 304, text: '' });
        expect(response.headers.get('etag')).toBe(tag);
        expect(response.headers.get('content-type')).toBeNull();
        expect(response.headers.get('x-request-id')).toBeTruthy();
      }
      // Another tag, or one that is not an entity tag at all: the full answer.
      for (const value of ['"other"', 'not-a-tag']) {
        const response = await api.get(`/pets/${petId}`, { ...admin, headers: { 'if-none-match': value } });
        expect(response.status).toBe(200);
        expect(response.body.id).toBe(petId);
      }
    });

    it('covers pet, category, stock entry, order, message and webhook endpoint', async () => {
      const { key } = await api.customer('Conditional reader');
      const petId = await store.pet({ quantity: 5 });
      const categoryId = await newCategory();
      const orderId = await store.placed(key, petId);
      const message = await api.post('/messages', { key, body: { message: 'hello' } });
      const endpoint = await api.post('/webhooks/endpoints', {
        key,
        body: { url: 'http://127.0.0.1:65000/hook', events: ['order.placed'] },
      });
      expect([message.status, endpoint.status]).toEqual([202, 201]);
      const paths = [
        [`/pets/${petId}`, admin.key],
        [`/categories/${categoryId}`, key],
        [`/store/inventory/${petId}`, key],
        [`/store/orders/${orderId}`, key],
        [`/messages/${message.body.id}`, key],
        [`/webhooks/endpoints/${endpoint.body.id}`, key],
      ];
      for (const [path, as] of paths) {
        const full = await api.get(path, { key: as });
        expect({ path, status: full.status, tag: TAG.test(etagOf(full)) }).toEqual({ path, status: 200, tag: true });
        const again = await api.get(path, { key: as, headers: { 'if-none-match': etagOf(full) } });
        expect({ path, status: again.status }).toEqual({ path, status: 304 });
      }
      // A change shows in the stock entry's tag: an order taken from it.
      const before = await api.get(`/store/inventory/${petId}`, admin);
      await store.placed(key, petId);
      const stale = await api.get(`/store/inventory/${petId}`, {
        ...admin,
        headers: { 'if-none-match': etagOf(before) },
      });
      expect(stale.status).toBe(200);
      expect(stale.body.quantity).toBe(before.body.quantity - 1);
    });

    it('an error is never a 304', async () => {
      const missing = await api.get('/categories/987654321', { ...admin, headers: { 'if-none-match': '*' } });
      expectError(missing, 404, 'not_found');
      const invalid = await api.get('/pets?ids=x', { ...admin, headers: { 'if-none-match': '*' } });
      expectError(invalid, 400, 'validation_failed');
    });
  });

  describe('ETag and If-None-Match on every list: the page as sent', () => {
    it('GET /pets?ids= (the successor of GET /pets/{petId}) answers 304 to its own ETag', async () => {
      const [a, b] = [await store.pet(), await store.pet()];
      const page = await api.get(`/pets?ids=${a},${b}`, admin);
      expect(page.status).toBe(200);
      expect(etagOf(page)).toMatch(TAG);
      const again = await api.get(`/pets?ids=${a},${b}`, { ...admin, headers: { 'if-none-match': etagOf(page) } });
      expect([again.status, again.text, again.headers.get('etag')]).toEqual([304, '', etagOf(page)]);
      expect(again.headers.get('content-type')).toBeNull();
      // The tag is the page's, not a resource's: the single pet's tag does not match the page.
      const single = await api.get(`/pets?ids=${a}`, { ...admin, headers: { 'if-none-match': etagOf(page) } });
      expect(single.status).toBe(200);
    });

    it("changes when the page's content changes (a rename, a restock), stays while it does not", async () => {
      const petId = await store.pet({ quantity: 2 });
      const pets = async () => api.get(`/pets?ids=${petId}`, admin);
      const before = etagOf(await pets());
      expect(etagOf(await pets())).toBe(before);
      expect((await api.patch(`/pets/${petId}`, { ...admin, body: { name: 'Renamed for the page' } })).status).toBe(
        200,
      );
      const renamed = await pets();
      expect(etagOf(renamed)).not.toBe(before);
      const stale = await api.get(`/pets?ids=${petId}`, { ...admin, headers: { 'if-none-match': before } });
      expect([stale.status, stale.body]).toEqual([200, renamed.body]);

      const inventory = async () => api.get('/store/inventory?limit=100', admin);
      const stocked = etagOf(await inventory());
      expect((await api.put(`/store/inventory/${petId}`, { ...admin, body: { quantity: 9 } })).status).toBe(200);
      expect(etagOf(await inventory())).not.toBe(stocked);
    });

    it('covers the Link: the same items with a next page now is another page', async () => {
      const categoryId = await newCategory();
      const petIn = async () => {
        const created = await api.post('/pets', { ...admin, body: { name: 'Paged', categoryId } });
        expect(created.status).toBe(201);
        return created.body.id as number;
      };
      const first = await petIn();
      const path = `/pets?categoryId=${categoryId}&limit=1`;
      const alone = await api.get(path, admin);
      expect([alone.body.map((pet: { id: number }) => pet.id), alone.headers.get('link')]).toEqual([[first], null]);
      await petIn();
      const withNext = await api.get(path, { ...admin, headers: { 'if-none-match': etagOf(alone) } });
      expect(withNext.status).toBe(200);
      expect(withNext.body).toEqual(alone.body);
      expect(withNext.headers.get('link')).toContain('rel="next"');
      expect(etagOf(withNext)).not.toBe(etagOf(alone));
    });

    it.each([
      '/pets',
      '/categories',
      '/store/inventory',
      '/store/orders',
      '/messages',
      '/events',
      '/webhooks/endpoints',
      '/accounts/me/api-keys',
    ])('%s sends an ETag and answers 304 to it', async (path) => {
      const page = await api.get(path, admin);
      expect(page.status).toBe(200);
      expect(etagOf(page)).toMatch(TAG);
      const again = await api.get(path, { ...admin, headers: { 'if-none-match': etagOf(page) } });
      expect(again.status).toBe(304);
    });
  });

  describe('If-Match on PUT, PATCH and DELETE', () => {
    it('applies a change whose If-Match is current, and refuses a stale one with 412, changing nothing', async () => {
      const petId = await store.pet();
      const read = await api.get(`/pets/${petId}`, admin);
      const first = await api.patch(`/pets/${petId}`, {
        ...admin,
        headers: { 'if-match': etagOf(read) },
        body: { name: 'First' },
      });
      expect(first.status).toBe(200);
      // The second administrator read the same version: its change would overwrite the first one's.
      const second = await api.patch(`/pets/${petId}`, {
        ...admin,
        headers: { 'if-match': etagOf(read) },
        body: { name: 'Second' },
      });
      expectError(second, 412, 'precondition_failed');
      expect((await api.get(`/pets/${petId}`, admin)).body.name).toBe('First');
      // With the new tag (the PATCH's answer carries it), or `*`, or without If-Match: applied.
      const third = await api.patch(`/pets/${petId}`, {
        ...admin,
        headers: { 'if-match': `"old", ${etagOf(first)}` },
        body: { name: 'Third' },
      });
      expect(third.status).toBe(200);
      const any = await api.patch(`/pets/${petId}`, { ...admin, headers: { 'if-match': '*' }, body: { name: 'Any' } });
      expect(any.status).toBe(200);
      expect((await api.patch(`/pets/${petId}`, { ...admin, body: { name: 'Plain' } })).status).toBe(200);
    });

    it('compares strongly: a weak tag never matches; a malformed If-Match is a 400', async () => {
      const petId = await store.pet();
      const tag = etagOf(await api.get(`/pets/${petId}`, admin));
      const weak = await api.patch(`/pets/${petId}`, {
        ...admin,
        headers: { 'if-match': `W/${tag}` },
        body: { name: 'W' },
      });
      expectError(weak, 412, 'precondition_failed');
      // Its own message: reading again would not help, a strong tag would.
      expect(weak.body.message).toMatch(/If-Match needs a strong entity tag/);
      expect(weak.body.message).not.toMatch(/changed since you read it/);
      const stale = await api.patch(`/pets/${petId}`, {
        ...admin,
        headers: { 'if-match': '"old"' },
        body: { name: 'S' },
      });
      expect(stale.body.message).toMatch(/changed since you read it/);
      const malformed = await api.patch(`/pets/${petId}`, {
        ...admin,
        headers: { 'if-match': tag.slice(1, -1) },
        body: { name: 'M' },
      });
      expectError(malformed, 400, 'validation_failed');
      expect(malformed.body.details).toEqual([{ field: 'If-Match', message: expect.any(String) }]);
    });

    it('answers 412 to If-None-Match: * on a change (the resource exists), and to a listed current tag', async () => {
      const petId = await store.pet({ quantity: 3 });
      const tag = etagOf(await api.get(`/pets/${petId}`, admin));
      const ifNoneMatch = (value: string) => ({ 'if-none-match': value });
      for (const value of ['*', tag, `W/${tag}`, `"old", ${tag}`]) {
        const patched = await api.patch(`/pets/${petId}`, {
          ...admin,
          headers: ifNoneMatch(value),
          body: { name: 'X' },
        });
        expect({ value, status: patched.status, code: patched.body.code }).toEqual({
          value,
          status: 412,
          code: 'precondition_failed',
        });
      }
      expect(etagOf(await api.get(`/pets/${petId}`, admin))).toBe(tag); // nothing changed
      expectError(
        await api.put(`/store/inventory/${petId}`, { ...admin, headers: ifNoneMatch('*'), body: { quantity: 9 } }),
        412,
        'precondition_failed',
      );
      expect((await store.stock(petId)).quantity).toBe(3);
      const categoryId = await newCategory();
      expectError(
        await api.delete(`/categories/${categoryId}`, { ...admin, headers: ifNoneMatch('*') }),
        412,
        'precondition_failed',
      );
      expect((await api.get(`/categories/${categoryId}`, admin)).status).toBe(200);
      // A tag that is no longer current lets the change through; a resource that does not exist is a 404 as ever.
      const renamed = await api.patch(`/pets/${petId}`, {
        ...admin,
        headers: ifNoneMatch('"old"'),
        body: { name: 'Y' },
      });
      expect(renamed.status).toBe(200);
      expectError(
        await api.patch('/pets/987654321', { ...admin, headers: ifNoneMatch('*'), body: { name: 'Z' } }),
        404,
        'not_found',
      );
      const malformed = await api.patch(`/pets/${petId}`, {
        ...admin,
        headers: ifNoneMatch('nope'),
        body: { name: 'M' },
      });
      expectError(malformed, 400, 'validation_failed');
      expect(malformed.body.details).toEqual([{ field: 'If-None-Match', message: expect.any(String) }]);
    });

    it('guards every change: pet, category, stock entry, order (complete, cancel), webhook endpoint', async () => {
      const { key } = await api.customer('Conditional writer');
      const stale = '"AAAAAAAAAAAAAAAAAAAAAA"';
      const ifMatch = (tag: string) => ({ 'if-match': tag });

      const petId = await store.pet({ quantity: 3 });
      const stockTag = etagOf(await api.get(`/store/inventory/${petId}`, admin));
      expectError(
        await api.put(`/store/inventory/${petId}`, { ...admin, headers: ifMatch(stale), body: { quantity: 9 } }),
        412,
        'precondition_failed',
      );
      const restocked = await api.put(`/store/inventory/${petId}`, {
        ...admin,
        headers: ifMatch(stockTag),
        body: { quantity: 9 },
      });
      expect(restocked.status).toBe(200);
      expect(etagOf(restocked)).toBe(etagOf(await api.get(`/store/inventory/${petId}`, admin)));
      expect((await store.stock(petId)).quantity).toBe(9);

      const orderId = await store.placed(key, petId);
      const orderTag = etagOf(await api.get(`/store/orders/${orderId}`, { key }));
      expectError(
        await api.delete(`/store/orders/${orderId}`, { key, headers: ifMatch(stale) }),
        412,
        'precondition_failed',
      );
      expectError(
        await api.patch(`/store/orders/${orderId}`, { ...admin, headers: ifMatch(stale), body: { complete: true } }),
        412,
        'precondition_failed',
      );
      expect((await store.ordersOf(petId)).open).toBe(1);
      const completed = await api.patch(`/store/orders/${orderId}`, {
        ...admin,
        headers: ifMatch(orderTag),
        body: { complete: true },
      });
      expect(completed.status).toBe(200);
      expect(etagOf(completed)).not.toBe(orderTag);
      const cancelled = await store.placed(key, petId);
      const cancelTag = etagOf(await api.get(`/store/orders/${cancelled}`, { key }));
      expect((await api.delete(`/store/orders/${cancelled}`, { key, headers: ifMatch(cancelTag) })).status).toBe(204);

      const categoryId = await newCategory();
      const categoryTag = etagOf(await api.get(`/categories/${categoryId}`, admin));
      expectError(
        await api.patch(`/categories/${categoryId}`, { ...admin, headers: ifMatch(stale), body: { description: 'x' } }),
        412,
        'precondition_failed',
      );
      const described = await api.patch(`/categories/${categoryId}`, {
        ...admin,
        headers: ifMatch(categoryTag),
        body: { description: 'x' },
      });
      expect(described.status).toBe(200);
      expectError(
        await api.delete(`/categories/${categoryId}`, { ...admin, headers: ifMatch(categoryTag) }),
        412,
        'precondition_failed',
      );
      expect(
        (await api.delete(`/categories/${categoryId}`, { ...admin, headers: ifMatch(etagOf(described)) })).status,
      ).toBe(204);

      const doomed = await store.pet();
      const petTag = etagOf(await api.get(`/pets/${doomed}`, admin));
      await api.patch(`/pets/${doomed}`, { ...admin, body: { name: 'Changed meanwhile' } });
      expectError(
        await api.delete(`/pets/${doomed}`, { ...admin, headers: ifMatch(petTag) }),
        412,
        'precondition_failed',
      );
      expect((await api.get(`/pets/${doomed}`, admin)).status).toBe(200);
      expect((await api.delete(`/pets/${doomed}`, { ...admin, headers: ifMatch('*') })).status).toBe(204);
      // Gone: 404 as without If-Match (a precondition is not evaluated for a resource that does not exist).
      expectError(await api.delete(`/pets/${doomed}`, { ...admin, headers: ifMatch('*') }), 404, 'not_found');

      const endpoint = await api.post('/webhooks/endpoints', {
        key,
        body: { url: 'http://127.0.0.1:65000/hook', events: ['order.placed'] },
      });
      const firstTag = etagOf(await api.get(`/webhooks/endpoints/${endpoint.body.id}`, { key }));
      const patchEvents = (tag: string, events: string[]) =>
        api.patch(`/webhooks/endpoints/${endpoint.body.id}`, { key, headers: ifMatch(tag), body: { events } });
      expectError(await patchEvents(stale, ['order.cancelled']), 412, 'precondition_failed');
      const patched = await patchEvents(firstTag, ['order.cancelled']);
      expect(patched.status).toBe(200);
      expect(patched.body.events).toEqual(['order.cancelled']);
      // The tag the other editor holds is now stale: its change is refused, not applied over the first one.
      expectError(await patchEvents(firstTag, ['order.placed']), 412, 'precondition_failed');
      const endpointTag = etagOf(await api.get(`/webhooks/endpoints/${endpoint.body.id}`, { key }));
      expect(endpointTag).toBe(etagOf(patched));
      expectError(
        await api.delete(`/webhooks/endpoints/${endpoint.body.id}`, { key, headers: ifMatch(stale) }),
        412,
        'precondition_failed',
      );
      const removed = await api.delete(`/webhooks/endpoints/${endpoint.body.id}`, {
        key,
        headers: ifMatch(endpointTag),
      });
      expect(removed.status).toBe(204);
    });

    it('lets exactly one of N concurrent PUTs with the same If-Match through; the others get 412', async () => {
      const petId = await store.pet({ quantity: 1 });
      const tag = etagOf(await api.get(`/store/inventory/${petId}`, admin));
      const N = 8;
      const responses = await Promise.all(
        Array.from({ length: N }, (_, i) =>
          api.put(`/store/inventory/${petId}`, { ...admin, headers: { 'if-match': tag }, body: { quantity: 10 + i } }),
        ),
      );
      const statuses = responses.map((r) => r.status).sort();
      expect(statuses).toEqual([200, ...Array(N - 1).fill(412)]);
      for (const refused of responses.filter((r) => r.status === 412)) expectError(refused, 412, 'precondition_failed');
      const [winner] = responses.filter((r) => r.status === 200);
      expect((await store.stock(petId)).quantity).toBe(winner.body.quantity);
    });

    it('two administrators PATCHing one pet at once from the same read: one wins, no update is lost', async () => {
      const petId = await store.pet();
      const tag = etagOf(await api.get(`/pets/${petId}`, admin));
      const N = 6;
      const responses = await Promise.all(
        Array.from({ length: N }, (_, i) =>
          api.patch(`/pets/${petId}`, { ...admin, headers: { 'if-match': tag }, body: { name: `Editor ${i}` } }),
        ),
      );
      expect(responses.map((r) => r.status).sort()).toEqual([200, ...Array(N - 1).fill(412)]);
      const [winner] = responses.filter((r) => r.status === 200);
      expect((await api.get(`/pets/${petId}`, admin)).body.name).toBe(winner.body.name);
    });
  });
});

/**
 * A 304 is charged like a full answer, in process and through the shared (Redis) store: deciding it ran the query (the
 * tag is the body's). Refunded, it made any filter that matches nothing free, an empty list's tag being a constant
 * anyone can compute (issue 48, item 5).
 */
const STORES: Array<[string, string | undefined]> = [['in process', undefined]];
// The shared store needs a Redis: TEST_REDIS_URL (CI sets it); without one, only the in-process store is tested.
if (process.env['TEST_REDIS_URL']) STORES.push(['shared through Redis', process.env['TEST_REDIS_URL']]);

describe.each(STORES)('conditional requests and the rate limit, %s', (_, redisUrl) => {
  let api: TestApp;
  const prefix = `petstore:test:${randomUUID()}:`;

  beforeAll(async () => {
    api = await TestApp.start(
      { auth: { rateLimitPerMinute: 6, ...(redisUrl ? { redisUrl } : {}) } },
      { rateLimitPrefix: prefix },
    );
    if (redisUrl) {
      // Counted in Redis, not in the process's fallback while its connection is still opening.
      await eventually(
        () => api.get<{ redis?: string }>('/health/ready').then((r) => r.body.redis),
        (redis) => redis === 'up',
      );
    }
  });
  afterAll(async () => {
    await api.close();
    if (redisUrl) {
      const redis = new Redis(redisUrl);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    }
  });

  it('counts a 304 like a full answer, and its RateLimit header says so', async () => {
    const { key } = await api.customer('Revalidating');
    const created = await api.post('/messages', { key, body: { message: 'poll me' } }); // 1 of 6
    const read = await api.get(`/messages/${created.body.id}`, { key }); // 2 of 6
    expect(read.headers.get('ratelimit')).toMatch(/^"default";r=4;t=\d+$/);
    const answers = [];
    for (let i = 0; i < 5; i++) {
      const answer = await api.get(`/messages/${created.body.id}`, { key, headers: { 'if-none-match': etagOf(read) } });
      answers.push([answer.status, answer.headers.get('ratelimit')?.replace(/;t=\d+$/, '')]);
    }
    expect(answers).toEqual([
      [304, '"default";r=3'],
      [304, '"default";r=2'],
      [304, '"default";r=1'],
      [304, '"default";r=0'],
      [429, '"default";r=0'],
    ]);
  });

  it('a flood of conditional requests for an empty list (a constant tag) reaches 429 within its budget', async () => {
    const { key } = await api.customer('Flooding'); // the sign-up counts against the address, not the key
    const nothing = '/pets?name=no-such-pet-anywhere'; // a filter that matches nothing: the empty list, 1 of 6
    const empty = await api.get(nothing, { key });
    expect(empty.body).toEqual([]);
    // Fired at once: five 304s spend the rest of the budget, whatever their order; every other one is refused.
    const flood = await Promise.all(
      Array.from({ length: 20 }, () => api.get(nothing, { key, headers: { 'if-none-match': etagOf(empty) } })),
    );
    const statuses = flood.map((answer) => answer.status).sort();
    expect(statuses).toEqual([...Array(5).fill(304), ...Array(15).fill(429)]);
    expectError(flood.find((answer) => answer.status === 429)!, 429, 'rate_limited');
  });

  it('charges a 304 earned by If-None-Match: *, which matches without knowing the resource', async () => {
    const { key } = await api.customer('Star');
    const created = await api.post('/messages', { key, body: { message: 'poll me' } }); // 1 of 6
    const star = () => api.get(`/messages/${created.body.id}`, { key, headers: { 'if-none-match': '*' } });
    const first = await star(); // 2 of 6
    expect(first.status).toBe(304);
    expect(first.headers.get('ratelimit')).toMatch(/^"default";r=4;t=\d+$/);
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await star()).status);
    // Four more 304s spend the budget; then the usual 429, as for any other request.
    expect(statuses).toEqual([304, 304, 304, 304, 429, 429]);
    expectError(await star(), 429, 'rate_limited');
  });
});
