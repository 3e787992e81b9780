/** What the cache reads the time from: the Clock port fits (common/ sits below the ports, and imports none). */
export interface TimeSource {
  now(): Date;
}

interface Entry<V> {
  value: V;
  expiresAt: number;
}

/**
 * Values kept for `ttlSeconds`, at most `maxEntries` (the oldest makes room), forgotten on request.
 * The shared part of the caches that a signal between instances invalidates (verified API keys,
 * webhook subscribers). A lookup that began before an invalidation must not store what it read:
 * take `ticket()` before the lookup and pass it to `set`, which stores nothing if any `delete` or
 * `clear` came since.
 */
export class ExpiringCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  /** Bumped by every delete and clear. */
  private generation = 0;

  constructor(
    private readonly clock: TimeSource,
    private readonly ttlSeconds: number,
    private readonly maxEntries: number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The fresh value under `key`, if any (an expired one is dropped). */
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt > this.clock.now().getTime()) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  /** Taken before a lookup whose result goes to `set`. */
  ticket(): number {
    return this.generation;
  }

  /** Keeps `value` unless an invalidation came since `ticket`; true if kept. */
  set(key: string, value: V, ticket: number): boolean {
    if (ticket !== this.generation) return false;
    this.entries.delete(key); // re-inserted last: the Map's order is the age order
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, expiresAt: this.clock.now().getTime() + this.ttlSeconds * 1000 });
    return true;
  }

  delete(keys: readonly string[]): void {
    this.generation++;
    for (const key of keys) this.entries.delete(key);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }
}
