import { createHash } from 'node:crypto';
import { Account, ApiKey, ApiKeyRequest } from '@petstore/domain';
import { AccountRepository, ApiKeyRepository } from '../../src/account/account.repository';
import { ConstraintViolationError, UnitOfWork } from '../../src/ports';

export interface ApiKeyContractSubject {
  accounts: AccountRepository;
  apiKeys: ApiKeyRepository;
  uow: UnitOfWork;
}

const NOW = new Date('2026-01-15T10:00:00.000Z');
let keys = 0;
/** A key as IssueApiKey stores it: a prefix and a SHA-256 hex hash, different every time. */
type KeyOptions = { bootstrap?: boolean; hash?: string; request?: ApiKeyRequest };
const aKeyFor = (id: number, accountId: number, options: KeyOptions = {}) => {
  const hash = options.hash ?? createHash('sha256').update(`api key contract ${++keys}`).digest('hex');
  return ApiKey.issue({
    id,
    accountId,
    prefix: `psk_${hash.slice(0, 8)}`,
    hash,
    now: NOW,
    bootstrap: options.bootstrap,
    request: options.request,
  });
};
const at = (ms: number) => new Date(NOW.getTime() + ms);

/**
 * The behaviour of ApiKeyRepository the account use cases and the authentication rely on (a key found by its hash
 * with its account, counted and listed while active, revoked, its use recorded), run against the in-memory fake
 * (libs/application) and the PostgreSQL repository (libs/infrastructure). `makeRepo` gives a fresh, empty store
 * each test, with new repositories (PgApiKeyRepository's memory of touched keys starts empty).
 */
export function describeApiKeyRepositoryContract(name: string, makeRepo: () => Promise<ApiKeyContractSubject>): void {
  describe(`ApiKeyRepository contract: ${name}`, () => {
    let subject: ApiKeyContractSubject;
    let apiKeys: ApiKeyRepository;
    let alice: Account;

    beforeEach(async () => {
      subject = await makeRepo();
      ({ apiKeys } = subject);
      alice = await signUp('Alice');
    });

    /** New accounts and keys as the use cases make them: an id from `nextId()`, then `add`. */
    const signUp = async (name: string): Promise<Account> => {
      const account = Account.signUp({ id: await subject.accounts.nextId(), name, now: NOW });
      await subject.accounts.add(account);
      return account;
    };
    const administrator = async (name: string): Promise<Account> => {
      const account = Account.administrator({ id: await subject.accounts.nextId(), name, now: NOW });
      await subject.accounts.add(account);
      return account;
    };
    const addKey = async (accountId: number, options: KeyOptions = {}): Promise<ApiKey> => {
      const key = aKeyFor(await apiKeys.nextId(), accountId, options);
      expect(await apiKeys.add(key)).toBe(true);
      return key;
    };

    it('stores a key and finds it with its account by hash, and by account and id', async () => {
      const key = await addKey(alice.id);
      expect(key.id).toBeGreaterThan(0);
      const found = await apiKeys.findByHash(key.hash);
      expect(found?.key.toSnapshot()).toEqual(key.toSnapshot());
      expect(found?.account.toSnapshot()).toEqual(alice.toSnapshot());
      expect(await apiKeys.findByHash('0'.repeat(64))).toBeNull();
      expect((await apiKeys.findForAccount(alice.id, key.id))?.hash).toBe(key.hash);
      const bob = await signUp('Bob');
      expect(await apiKeys.findForAccount(bob.id, key.id)).toBeNull();
    });

    it('answers false instead of storing a second key with the same hash', async () => {
      const key = await addKey(alice.id);
      expect(await apiKeys.add(aKeyFor(await apiKeys.nextId(), alice.id, { hash: key.hash }))).toBe(false);
      expect(await apiKeys.countActiveForAccount(alice.id, NOW)).toBe(1);
    });

    it('counts and lists only active keys, a keyset page at a time; a revoked key is still found by hash', async () => {
      const saved: ApiKey[] = [];
      for (let i = 0; i < 3; i++) saved.push(await addKey(alice.id));
      saved[1].revoke(NOW);
      await apiKeys.save(saved[1]);
      expect(await apiKeys.countActiveForAccount(alice.id, NOW)).toBe(2);
      const first = await apiKeys.listForAccount(alice.id, { limit: 1 });
      expect(first.items.map((k) => k.id)).toEqual([saved[0].id]);
      expect(first.nextAfterId).toBe(saved[0].id);
      const rest = await apiKeys.listForAccount(alice.id, { limit: 5, afterId: saved[0].id });
      expect(rest).toEqual({ items: [expect.objectContaining({ id: saved[2].id })], nextAfterId: null });
      expect((await apiKeys.findByHash(saved[1].hash))?.key.isRevoked).toBe(true);
    });

    it("keeps a key's name, scopes and expiry; a key made without them: no name, full, no expiry", async () => {
      const named = await addKey(alice.id, { request: { name: 'CI', scopes: ['read'], expiresAt: at(3_600_000) } });
      const plain = await addKey(alice.id);
      expect((await apiKeys.findByHash(named.hash))?.key.toSnapshot()).toEqual(named.toSnapshot());
      expect((await apiKeys.findByHash(named.hash))?.key.toSnapshot()).toMatchObject({
        name: 'CI',
        scopes: ['read'],
        expiresAt: at(3_600_000),
      });
      expect((await apiKeys.findForAccount(alice.id, plain.id))?.toSnapshot()).toMatchObject({
        name: null,
        scopes: ['full'],
        expiresAt: null,
      });
      const listed = await apiKeys.listForAccount(alice.id, { limit: 5 });
      expect(listed.items.map((k) => k.toSnapshot())).toEqual([named.toSnapshot(), plain.toSnapshot()]);
    });

    it('an expired key no longer counts against the limit, but is still listed until revoked', async () => {
      const expiring = await addKey(alice.id, { request: { expiresAt: at(60_000) } });
      await addKey(alice.id);
      expect(await apiKeys.countActiveForAccount(alice.id, at(59_999))).toBe(2);
      expect(await apiKeys.countActiveForAccount(alice.id, at(60_000))).toBe(1);
      const listed = await apiKeys.listForAccount(alice.id, { limit: 5 });
      expect(listed.items.map((k) => k.id)).toContain(expiring.id);
    });

    it("finds the newest bootstrap key's account, and revokes the other active bootstrap keys", async () => {
      expect(await apiKeys.findBootstrapAccountId()).toBeNull();
      const root = await administrator('Root');
      const old = await addKey(alice.id, { bootstrap: true });
      const kept = await addKey(root.id, { bootstrap: true });
      const plain = await addKey(root.id);
      expect(await apiKeys.findBootstrapAccountId()).toBe(root.id);
      expect(await apiKeys.revokeBootstrapKeysExcept(kept.hash, NOW)).toEqual([old.hash]);
      expect((await apiKeys.findByHash(old.hash))?.key.isRevoked).toBe(true);
      expect((await apiKeys.findByHash(kept.hash))?.key.isRevoked).toBe(false);
      expect((await apiKeys.findByHash(plain.hash))?.key.isRevoked).toBe(false);
      expect(await apiKeys.revokeBootstrapKeysExcept(kept.hash, NOW)).toEqual([]);
    });

    it('records a use, at most once a minute', async () => {
      const key = await addKey(alice.id);
      const at = new Date(NOW.getTime() + 5_000);
      await apiKeys.touch(key.id, at);
      expect((await apiKeys.findByHash(key.hash))?.key.lastUsedAt).toEqual(at);
      await apiKeys.touch(key.id, new Date(at.getTime() + 30_000));
      expect((await apiKeys.findByHash(key.hash))?.key.lastUsedAt).toEqual(at);
      const later = new Date(at.getTime() + 120_000);
      await apiKeys.touch(key.id, later);
      expect((await apiKeys.findByHash(key.hash))?.key.lastUsedAt).toEqual(later);
    });

    it("lists and counts only the account's own keys", async () => {
      const bob = await signUp('Bob');
      const own = await addKey(alice.id);
      await addKey(bob.id);
      expect((await apiKeys.listForAccount(alice.id, { limit: 5 })).items.map((k) => k.id)).toEqual([own.id]);
      expect(await apiKeys.countActiveForAccount(alice.id, NOW)).toBe(1);
      expect(await apiKeys.listForAccount(bob.id + 1000, { limit: 5 })).toEqual({ items: [], nextAfterId: null });
    });

    it("writes a revocation with its time; the key's other fields stay", async () => {
      const key = await addKey(alice.id, { request: { name: 'Deploy', scopes: ['read'] } });
      key.revoke(at(1_000));
      await apiKeys.save(key);
      const stored = (await apiKeys.findForAccount(alice.id, key.id))?.toSnapshot();
      expect(stored).toEqual(key.toSnapshot());
      expect(stored).toMatchObject({ name: 'Deploy', scopes: ['read'], revokedAt: at(1_000) });
    });

    it('refuses a key for an account that does not exist, storing nothing', async () => {
      const key = aKeyFor(await apiKeys.nextId(), alice.id + 1000);
      await expect(apiKeys.add(key)).rejects.toBeInstanceOf(ConstraintViolationError);
      await expect(apiKeys.add(key)).rejects.toMatchObject({ constraintKind: 'foreign_key' });
      expect(await apiKeys.findByHash(key.hash)).toBeNull();
    });

    it('rolls back a key added in a failed unit of work; a key added in a committed one stays', async () => {
      let dropped = '';
      await expect(
        subject.uow.run(async () => {
          dropped = (await addKey(alice.id)).hash;
          throw new Error('the command failed');
        }),
      ).rejects.toThrow('the command failed');
      expect(await apiKeys.findByHash(dropped)).toBeNull();
      const kept = await subject.uow.run(() => addKey(alice.id));
      expect((await apiKeys.findByHash(kept.hash))?.key.id).toBe(kept.id);
    });
  });
}
