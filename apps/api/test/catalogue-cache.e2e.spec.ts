import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { CATALOGUE_CHANGES_CHANNEL, PgCatalogueChanges } from '@petstore/infrastructure';
import { CatalogueCache } from '../src/common/conditional/catalogue-cache';
import { ADMIN_KEY, TestApp } from './support/test-app';

jest.setTimeout(180_000);

/** The bound the tests hold the cache to (CATALOGUE_CACHE_STALENESS_BOUND_MS's default). */
const BOUND_MS = 100;
const redisUrl = process.env['TEST_REDIS_URL'];

const cacheOf = (app: TestApp) => app.app.get(CatalogueCache);
const hitsOf = (app: TestApp) => cacheOf(app).stats.hits + cacheOf(app).stats.joined;

/** Until the cache trusts its listener (its first heartbeat back), nothing is served from it. */
async function trusted(app: TestApp): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!cacheOf(app).trusted) {
    if (Date.now() > deadline) throw new Error('the catalogue cache never trusted its listener');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('the catalogue cache, one instance', () => {
  let app: TestApp;
  let customer: string;
  let other: string;
  let petId: number;

  beforeAll(async () => {
    app = await TestApp.start();
    const category = await app.post('/categories', { key: ADMIN_KEY, body: { name: 'Cats' } });
    const pet = await app.post('/pets', { key: ADMIN_KEY, body: { name: 'Tom', categoryId: category.body.id } });
    petId = pet.body.id;
    await app.put(`/store/inventory/${petId}`, { key: ADMIN_KEY, body: { quantity: 10 } });
    customer = (await app.customer('Reader')).key;
    other = (await app.customer('Other reader')).key;
    await trusted(app);
  });
  afterAll(() => app?.close());

  it('answers a second read from memory: same bytes and ETag, a 304 for the tag, the key still checked', async () => {
    const first = await app.get('/pets?status=available', { key: customer });
    const hits = hitsOf(app);
    const second = await app.get('/pets?status=available', { key: other });
    expect(hitsOf(app)).toBe(hits + 1);
    expect(second.status).toBe(200);
    expect(second.text).toBe(first.text);
    expect(second.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(second.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(second.headers.get('x-request-id')).toBeTruthy();
    const revalidated = await app.get('/pets?status=available', {
      key: customer,
      headers: { 'if-none-match': String(first.headers.get('etag')) },
    });
    expect(revalidated.status).toBe(304);
    expect(revalidated.headers.get('etag')).toBe(first.headers.get('etag'));
    // A hit is only ever served after the key check: no key, a wrong key, are refused as without the cache.
    expect((await app.get('/pets?status=available', { key: null })).status).toBe(401);
    expect((await app.get('/pets?status=available', { key: 'psk_wrong' })).status).toBe(401);
    // Another query string is another answer.
    const other_ = await app.get('/pets?status=sold', { key: customer });
    expect(other_.body).toEqual([]);
  });

  it("keeps a deprecated route's headers and a page's Link on a hit", async () => {
    await app.post('/pets', { key: ADMIN_KEY, body: { name: 'Second', categoryId: 1 } });
    const url = '/pets?status=available&status=pending&limit=1';
    const first = await app.get(url, { key: customer });
    const second = await app.get(url, { key: customer });
    expect(second.headers.get('link')).toBe(first.headers.get('link'));
    expect(first.headers.get('link')).toContain('rel="next"');
    const byId = await app.get(`/pets/${petId}`, { key: customer });
    const again = await app.get(`/pets/${petId}`, { key: customer });
    expect(again.headers.get('deprecation')).toBe(byId.headers.get('deprecation'));
    expect(again.headers.get('deprecation')).toBeTruthy();
  });

  it('shows a write at once, to everyone, on the instance that answered it (pet, category, stock)', async () => {
    // The change notices (the triggers' NOTIFY, this instance's own announcements) come late here, as on a loaded
    // host: the instance that answered the write must have dropped what it replaced before answering, not when its
    // notice comes. The heartbeat is not delayed: the cache stays trusted.
    const changes = app.app.get(PgCatalogueChanges);
    const receive = changes.receive.bind(changes);
    const held = new Map<NodeJS.Timeout, () => void>();
    const late = jest.spyOn(changes, 'receive').mockImplementation((channel, payload) => {
      if (channel !== CATALOGUE_CHANGES_CHANNEL) return receive(channel, payload);
      const deliver = () => {
        held.delete(timer);
        receive(channel, payload);
      };
      const timer = setTimeout(deliver, 500);
      held.set(timer, deliver);
    });
    try {
      await shownAtOnce();
    } finally {
      late.mockRestore();
      // The notices still held are delivered now: none may reach the next test's reads.
      for (const [timer, deliver] of held) {
        clearTimeout(timer);
        deliver();
      }
    }
  });

  async function shownAtOnce(): Promise<void> {
    // Cached for `other` first.
    const cached = async (url: string) => {
      await app.get(url, { key: other });
      const hits = hitsOf(app);
      const again = await app.get(url, { key: other });
      expect(hitsOf(app)).toBe(hits + 1);
      return again.body;
    };
    await cached(`/pets/${petId}`);
    await cached(`/pets?ids=${petId}`);
    const renamed = await app.patch(`/pets/${petId}`, { key: ADMIN_KEY, body: { name: 'Renamed' } });
    expect(renamed.status).toBe(200);
    expect((await app.get(`/pets/${petId}`, { key: ADMIN_KEY })).body.name).toBe('Renamed');
    expect((await app.get(`/pets/${petId}`, { key: other })).body.name).toBe('Renamed');
    expect((await app.get(`/pets?ids=${petId}`, { key: other })).body[0].version).toBe(renamed.body.version);

    const category = (await app.post('/categories', { key: ADMIN_KEY, body: { name: 'Birds' } })).body;
    await cached(`/categories/${category.id}`);
    await app.patch(`/categories/${category.id}`, { key: ADMIN_KEY, body: { name: 'Parrots' } });
    expect((await app.get(`/categories/${category.id}`, { key: other })).body.name).toBe('Parrots');

    // A customer's order changes the stock: the customer, and everyone else, see it at once.
    const before = await cached(`/store/inventory/${petId}`);
    const order = await app.post('/store/orders', { key: customer, body: { petId, quantity: 1 } });
    expect(order.status).toBe(201);
    expect((await app.get(`/store/inventory/${petId}`, { key: customer })).body.quantity).toBe(before.quantity - 1);
    expect((await app.get(`/store/inventory/${petId}`, { key: other })).body.quantity).toBe(before.quantity - 1);
  }

  it('makes one query for concurrent misses of the same key', async () => {
    const { stats } = cacheOf(app);
    // The rename drops this instance's pet answers when it is answered, then its trigger's notice drops them again:
    // the reads wait for that notice, so that it cannot end the first miss's answer while they join it.
    const heard = stats.invalidations.pets;
    await app.patch(`/pets/${petId}`, { key: ADMIN_KEY, body: { name: 'Concurrent' } });
    for (const deadline = Date.now() + 5000; stats.invalidations.pets < heard + 2; ) {
      if (Date.now() > deadline) throw new Error("the rename's notice never came");
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const misses = stats.misses - stats.joined;
    const url = `/pets?ids=${petId}`;
    // `other`: the customer ordered above, and a writer's reads bypass the cache for the maximum age.
    const answers = await Promise.all(Array.from({ length: 20 }, () => app.get(url, { key: other })));
    expect(new Set(answers.map((answer) => answer.text)).size).toBe(1);
    // Followers joined the first miss, or came after it was kept (the unit tests hold the single flight exactly).
    expect(stats.misses - stats.joined - misses).toBe(1);
  });

  it('says what it did in the metrics', async () => {
    const { text } = await app.get('/metrics', { key: ADMIN_KEY });
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(value('catalogue_cache_hits_total')).toBe(hitsOf(app));
    expect(value('catalogue_cache_entries')).toBeGreaterThan(0);
    expect(value('catalogue_cache_bytes')).toBeGreaterThan(0);
    expect(value('catalogue_cache_staleness_bound_seconds')).toBe(BOUND_MS / 1000);
    expect(text).toMatch(/^catalogue_cache_invalidations_total\{table="pets"\} [1-9]/m);
    expect(text).toMatch(/^catalogue_cache_bypasses_total\{reason="writer"\} [1-9]/m);
  });
});

/**
 * Two instances on one PostgreSQL, their change signals over real NOTIFY, the recent writers in Redis: random
 * interleavings of writes (an administrator's pet renames and stock levels, customers' orders) and reads by everyone
 * on either instance never show a resource older than the reader's own last write, nor older than the bound.
 */
(redisUrl ? describe : describe.skip)('the catalogue cache, two instances (property)', () => {
  let one: TestApp;
  let two: TestApp;
  const pets: number[] = [];
  let buyers: string[];
  let reader: string;

  beforeAll(async () => {
    const auth = { redisUrl: String(redisUrl), redisKeyPrefix: `catalogue-cache-${randomUUID()}:` };
    // A shorter maximum age than the default: the writers come back to the cache within a run too.
    const catalogueCache = { maxAgeMs: 400 };
    one = await TestApp.start({ auth, catalogueCache });
    two = await TestApp.startOn(one.databaseUrl, { auth, catalogueCache });
    const category = await one.post('/categories', { key: ADMIN_KEY, body: { name: 'Dogs' } });
    for (const name of ['Rex', 'Fido']) {
      const pet = await one.post('/pets', { key: ADMIN_KEY, body: { name, categoryId: category.body.id } });
      await one.put(`/store/inventory/${pet.body.id}`, { key: ADMIN_KEY, body: { quantity: 100_000 } });
      pets.push(pet.body.id);
    }
    buyers = [(await one.customer('Buyer 1')).key, (await two.customer('Buyer 2')).key];
    reader = (await two.customer('Reader')).key;
    await Promise.all([trusted(one), trusted(two)]);
  });
  afterAll(async () => {
    await two?.close();
    await one?.close();
  });

  type Op =
    | { kind: 'rename' | 'stock'; actor: number; instance: number; pet: number }
    | { kind: 'order'; actor: number; instance: number; pet: number }
    | { kind: 'read'; actor: number; instance: number; pet: number; what: 'pet' | 'list' | 'stock' | 'inventory' };
  /** Lane 0 the administrator, 1 and 2 the buyers, 3 a customer who only reads. */
  const actors = () => [ADMIN_KEY, ...buyers, reader];

  it('never serves a page older than the reader’s own last write, nor older than the bound', async () => {
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({
        kind: fc.constantFrom('rename' as const, 'stock' as const),
        actor: fc.constant(0),
        instance: fc.nat(1),
        pet: fc.nat(1),
      }),
      fc.record({
        kind: fc.constant('order' as const),
        actor: fc.integer({ min: 1, max: 2 }),
        instance: fc.nat(1),
        pet: fc.nat(1),
      }),
      fc.record({
        kind: fc.constant('read' as const),
        actor: fc.nat(2),
        instance: fc.nat(1),
        pet: fc.nat(1),
        what: fc.constantFrom('pet' as const, 'list' as const, 'stock' as const, 'inventory' as const),
      }),
    );
    let round = 0;
    const hitsBefore = hitsOf(one) + hitsOf(two);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(op, { minLength: 5, maxLength: 25 }), { minLength: 4, maxLength: 4 }),
        async (lanes) => {
          round++;
          /** Versions each write's answer showed, when its answer arrived (it committed before). */
          const writes: Array<{ resource: string; version: number; at: number; actor: number }> = [];
          const own = new Map<string, number>();
          const needed = (resource: string, actor: number, startedAt: number) => {
            let version = own.get(`${actor}:${resource}`) ?? 0;
            for (const write of writes) {
              if (write.resource === resource && write.at < startedAt - BOUND_MS)
                version = Math.max(version, write.version);
            }
            return version;
          };
          const wrote = (resource: string, version: number, actor: number) => {
            writes.push({ resource, version, at: performance.now(), actor });
            own.set(`${actor}:${resource}`, Math.max(own.get(`${actor}:${resource}`) ?? 0, version));
          };
          const run = async (lane: Op[], laneIndex: number) => {
            for (let step of lane) {
              // Lanes are actors: lane 0 the administrator, 1 and 2 the buyers, 3 the reader (its writes become reads).
              if (laneIndex === 3 && step.kind !== 'read') {
                step = { kind: 'read', actor: 3, instance: step.instance, pet: step.pet, what: 'list' };
              }
              const actor = step.kind === 'read' ? laneIndex : step.actor === 0 ? 0 : laneIndex === 0 ? 1 : laneIndex;
              const key = actors()[actor];
              const app = step.instance === 0 ? one : two;
              const petId = pets[step.pet];
              if (step.kind === 'rename' && actor === 0) {
                const answer = await app.patch(`/pets/${petId}`, {
                  key,
                  body: { name: `Pet ${round}-${randomUUID()}` },
                });
                expect(answer.status).toBe(200);
                wrote(`pet:${petId}`, answer.body.version, actor);
              } else if (step.kind === 'stock' && actor === 0) {
                const answer = await app.put(`/store/inventory/${petId}`, {
                  key,
                  body: { quantity: 50_000 + Math.floor(Math.random() * 50_000) },
                });
                expect(answer.status).toBe(200);
                wrote(`stock:${petId}`, answer.body.version, actor);
              } else if (step.kind === 'order' || step.kind === 'rename' || step.kind === 'stock') {
                const answer = await app.post('/store/orders', { key, body: { petId, quantity: 1 } });
                expect(answer.status).toBe(201);
                const level = await one.sql<{ version: string }>('SELECT version FROM stock WHERE pet_id = $1', [
                  petId,
                ]);
                // The order's answer does not show the stock entry: its version is at least the one read after.
                wrote(`stock:${petId}`, Math.min(Number(level[0].version), Number.MAX_SAFE_INTEGER), actor);
              } else if (step.kind === 'read') {
                const startedAt = performance.now();
                if (step.what === 'pet' || step.what === 'list') {
                  const answer =
                    step.what === 'pet'
                      ? await app.get(`/pets/${petId}`, { key })
                      : await app.get(`/pets?ids=${pets.join(',')}`, { key });
                  const pet =
                    step.what === 'pet' ? answer.body : answer.body.find((p: { id: number }) => p.id === petId);
                  expect(pet.version).toBeGreaterThanOrEqual(needed(`pet:${petId}`, actor, startedAt));
                } else {
                  const answer =
                    step.what === 'stock'
                      ? await app.get(`/store/inventory/${petId}`, { key })
                      : await app.get('/store/inventory', { key });
                  const item =
                    step.what === 'stock' ? answer.body : answer.body.find((i: { petId: number }) => i.petId === petId);
                  expect(item.version).toBeGreaterThanOrEqual(needed(`stock:${petId}`, actor, startedAt));
                }
              }
            }
          };
          await Promise.all(lanes.map((lane, i) => run(lane, i)));
        },
      ),
      { numRuns: 15 },
    );
    // Not vacuous: the reads were served from the caches too.
    expect(hitsOf(one) + hitsOf(two)).toBeGreaterThan(hitsBefore);
  });
});
