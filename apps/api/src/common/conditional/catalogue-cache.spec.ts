import { CatalogueCache, CatalogueCacheSettings, LocalRecentWriters } from './catalogue-cache';

const SETTINGS: CatalogueCacheSettings = {
  enabled: true,
  maxEntries: 100,
  maxBytes: 1_000_000,
  maxAgeMs: 5000,
  stalenessBoundMs: 100,
};

function setUp(settings: Partial<CatalogueCacheSettings> = {}) {
  let now = 0;
  let heard = true;
  const writers = new LocalRecentWriters(5000);
  const cache = new CatalogueCache({ ...SETTINGS, ...settings }, { heardWithin: () => heard }, writers, () => now);
  const sent = (body = '[{"id":1}]') => ({ body, tag: '"t"', contentType: 'application/json; charset=utf-8' });
  const keep = (key: string, body?: string) => {
    const { flight, leader } = cache.flightFor(key, ['pets']);
    expect(leader).toBe(true);
    cache.settle(flight, sent(body));
  };
  return {
    cache,
    writers,
    keep,
    sent,
    advance: (ms: number) => (now += ms),
    deaf: () => (heard = false),
  };
}

describe('CatalogueCache', () => {
  it('serves what a miss kept, as bytes, until a change of one of its tables is heard', () => {
    const { cache, keep } = setUp();
    keep('/pets?status=available');
    expect(cache.lookup('/pets?status=available')?.body.toString()).toBe('[{"id":1}]');
    cache.changed(['categories', 'stock']);
    expect(cache.lookup('/pets?status=available')).toBeDefined();
    cache.changed(['pets']);
    expect(cache.lookup('/pets?status=available')).toBeUndefined();
    expect(cache.stats.invalidations).toEqual({ categories: 1, pets: 1, stock: 1 });
  });

  it('does not keep an answer whose query ran while a change was heard', () => {
    const { cache, sent } = setUp();
    const { flight } = cache.flightFor('/pets', ['pets']);
    cache.changed(['pets']);
    cache.settle(flight, sent());
    expect(cache.lookup('/pets')).toBeUndefined();
    expect(cache.stats.discarded).toBe(1);
  });

  it('serves nothing older than the maximum age (from its query start), whatever was heard', () => {
    const { cache, keep, advance } = setUp({ maxAgeMs: 1000 });
    keep('/categories');
    advance(1000);
    expect(cache.lookup('/categories')).toBeDefined();
    advance(1);
    expect(cache.lookup('/categories')).toBeUndefined();
  });

  it('is bypassed while the listener has not heard within the bound, and emptied when it reconnects', async () => {
    const { cache, keep, deaf } = setUp();
    keep('/categories');
    cache.reset();
    expect(cache.lookup('/categories')).toBeUndefined();
    keep('/categories');
    deaf();
    expect(await cache.bypassFor(7)).toBe('untrusted');
    expect(cache.trusted).toBe(false);
  });

  it('bypasses an account that wrote within the maximum age (its own write, on every instance)', async () => {
    const { cache } = setUp();
    expect(await cache.bypassFor(7)).toBeUndefined();
    await cache.wrote(7);
    expect(await cache.bypassFor(7)).toBe('writer');
    expect(await cache.bypassFor(8)).toBeUndefined();
  });

  it('asks the shared writers too, and a store that does not answer is a bypass', async () => {
    const shared = { mark: jest.fn(async () => undefined), wrote: jest.fn(async (account: number) => account === 9) };
    const writers = new LocalRecentWriters(5000, shared);
    const cache = new CatalogueCache(SETTINGS, { heardWithin: () => true }, writers);
    expect(await cache.bypassFor(9)).toBe('writer');
    expect(await cache.bypassFor(8)).toBeUndefined();
    shared.wrote.mockRejectedValueOnce(new Error('down'));
    expect(await cache.bypassFor(8)).toBe('writers_unknown');
  });

  it('makes one flight of concurrent misses: followers get the leader’s answer', async () => {
    const { cache, sent } = setUp();
    const first = cache.flightFor('/pets', ['pets']);
    const second = cache.flightFor('/pets', ['pets']);
    expect(first.leader).toBe(true);
    expect(second.leader).toBe(false);
    expect(second.flight).toBe(first.flight);
    const joined = cache.join(second.flight);
    cache.settle(first.flight, sent('[{"id":2}]'));
    expect((await joined)?.body.toString()).toBe('[{"id":2}]');
    expect(cache.stats.joined).toBe(1);
    // A change heard meanwhile starts another flight: the old one's answer may predate it.
    const third = cache.flightFor('/x', ['pets']);
    cache.changed(['pets']);
    expect(cache.flightFor('/x', ['pets']).leader).toBe(true);
    cache.settle(third.flight);
  });

  it('lets followers go when the leader answers with something not kept (an error)', async () => {
    const { cache } = setUp();
    const leader = cache.flightFor('/pets/1', ['pets']);
    const follower = cache.flightFor('/pets/1', ['pets']);
    const joined = cache.join(follower.flight);
    cache.settle(leader.flight);
    expect(await joined).toBeUndefined();
  });

  it('stays within its bounds in entries and bytes, the least recently used dropped first', () => {
    const { cache, keep } = setUp({ maxEntries: 3, maxBytes: 1_000_000 });
    for (const key of ['/a', '/b', '/c']) keep(key);
    cache.lookup('/a');
    keep('/d');
    expect(cache.lookup('/b')).toBeUndefined();
    expect(cache.lookup('/a')).toBeDefined();
    expect(cache.size.entries).toBe(3);
    expect(cache.stats.evictions).toBe(1);

    const bytes = setUp({ maxEntries: 1000, maxBytes: 2000 });
    for (let i = 0; i < 10; i++) bytes.keep(`/p${i}`, 'x'.repeat(500));
    expect(bytes.cache.size.bytes).toBeLessThanOrEqual(2000);
    expect(bytes.cache.size.entries).toBeLessThan(10);
  });
});
