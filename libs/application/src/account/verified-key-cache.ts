import { Injectable } from '@nestjs/common';
import type { Account, ApiKeyScope } from '@petstore/domain';
import { ExpiringCache } from '../common/expiring-cache';
import { Clock } from '../ports';
import { KeyRevocations, RevocationSubscriber } from './key-revocations';

/** How long a verified key is trusted without asking the database (from the configuration). */
export class VerifiedKeyCacheSettings {
  constructor(
    /** Seconds a verified key stays cached (API_KEY_CACHE_SECONDS); 0 = no cache. */
    readonly ttlSeconds: number,
    /** Keys cached at most; the oldest entry makes room for a new one. */
    readonly maxEntries = 10_000,
  ) {}
}

/** A key found valid: its account, and what bounds it (its scopes, its expiry). */
export interface VerifiedKey {
  account: Account;
  keyId: number;
  scopes: readonly ApiKeyScope[];
  /** Refused from this instant on; null: it does not expire. */
  expiresAt: Date | null;
}

/**
 * Keys found valid in the database, by hash (never by the secret), for a few seconds: a cached
 * key costs no database round trip. Only valid keys are kept: an unknown or revoked key is
 * looked up every time, so inventing keys cannot fill the cache, and a valid key cannot be
 * refused by a stale entry. Revocations reach it through KeyRevocations; while those are not
 * received (the signal's connection is down) it serves nothing. Expiry needs no signal: every hit
 * compares the key's `expiresAt` with the Clock, so an expired key is never served, on any instance.
 *
 * A lookup that started before a revocation must not store what it read: `ticket()` is taken
 * before the lookup, and `remember` stores nothing if any revocation (or reset) arrived since.
 */
@Injectable()
export class VerifiedKeyCache implements RevocationSubscriber {
  private readonly cache: ExpiringCache<VerifiedKey>;

  constructor(
    private readonly revocations: KeyRevocations,
    private readonly clock: Clock,
    private readonly settings: VerifiedKeyCacheSettings,
  ) {
    this.cache = new ExpiringCache(clock, settings.ttlSeconds, settings.maxEntries);
    if (this.enabled) revocations.subscribe(this);
  }

  get enabled(): boolean {
    return this.settings.ttlSeconds > 0;
  }

  get size(): number {
    return this.cache.size;
  }

  /** The cached key with this hash, if it is fresh, not expired, and revocations are being received. */
  get(hash: string): VerifiedKey | null {
    if (!this.enabled || !this.revocations.listening) return null;
    const key = this.cache.get(hash);
    // Left in place once expired (it ages out): deleting would count as an invalidation for lookups under way.
    if (!key || (key.expiresAt !== null && key.expiresAt.getTime() <= this.clock.now().getTime())) return null;
    return key;
  }

  /** Taken before looking a key up in the database; `remember` needs it. */
  ticket(): number {
    return this.cache.ticket();
  }

  /** Keeps a key found valid by a lookup that began at `ticket`, unless a revocation came since. */
  remember(hash: string, key: VerifiedKey, ticket: number): void {
    if (!this.enabled || !this.revocations.listening) return;
    const { account, keyId, scopes, expiresAt } = key;
    this.cache.set(hash, { account, keyId, scopes, expiresAt }, ticket);
  }

  /** Revoked keys (announced by any instance, or just revoked here): forgotten at once. */
  revoked(hashes: readonly string[]): void {
    this.cache.delete(hashes);
  }

  reset(): void {
    this.cache.clear();
  }
}
