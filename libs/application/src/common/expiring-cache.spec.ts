import { FixedClock } from '../../testing/in-memory/in-memory-database';
import { ExpiringCache } from './expiring-cache';

describe('ExpiringCache', () => {
  const start = new Date('2026-01-15T10:00:00.000Z');
  const later = (ms: number) => new Date(start.getTime() + ms);

  it('keeps a value for its ttl, then forgets it', () => {
    const clock = new FixedClock(start);
    const cache = new ExpiringCache<string>(clock, 5, 10);
    expect(cache.set('a', 'A', cache.ticket())).toBe(true);
    clock.set(later(4_999));
    expect(cache.get('a')).toBe('A');
    clock.set(later(5_000));
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('keeps at most maxEntries, dropping the oldest', () => {
    const cache = new ExpiringCache<number>(new FixedClock(start), 60, 2);
    for (const [key, value] of [
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ] as const)
      cache.set(key, value, cache.ticket());
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([undefined, 2, 3]);
  });

  it('stores nothing from a lookup that began before a delete or a clear', () => {
    const cache = new ExpiringCache<number>(new FixedClock(start), 60, 10);
    const before = cache.ticket();
    cache.delete(['unrelated']);
    expect(cache.set('a', 1, before)).toBe(false);
    const again = cache.ticket();
    cache.clear();
    expect(cache.set('a', 1, again)).toBe(false);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.set('a', 1, cache.ticket())).toBe(true);
  });

  it('forgets deleted keys at once', () => {
    const cache = new ExpiringCache<number>(new FixedClock(start), 60, 10);
    cache.set('a', 1, cache.ticket());
    cache.set('b', 2, cache.ticket());
    cache.delete(['a']);
    expect([cache.get('a'), cache.get('b')]).toEqual([undefined, 2]);
  });
});
