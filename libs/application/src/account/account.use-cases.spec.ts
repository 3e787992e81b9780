import { Account, ApiKeyNotFoundError, InsufficientScopeError, TooManyApiKeysError, LIMITS } from '@petstore/domain';
import { inMemoryPetstore, InMemoryPetstore } from '../../testing';
import { Authenticate, EnsureAdministrator, IssueApiKey, ManageApiKeys, SignUp } from './account.use-cases';
import { VerifiedKeyCache, VerifiedKeyCacheSettings } from './verified-key-cache';

describe('account use cases (in-memory ports)', () => {
  let store: InMemoryPetstore;
  /** This instance's cache of verified keys (5 s, at most 3 entries), as the composition root makes one. */
  let cache: VerifiedKeyCache;
  beforeEach(() => {
    store = inMemoryPetstore();
    cache = new VerifiedKeyCache(store.keyRevocations, store.clock, new VerifiedKeyCacheSettings(5, 3));
  });

  const issueKey = () => new IssueApiKey(store.uow, store.accounts, store.apiKeys, store.secrets, store.clock);
  const signUp = (name = 'Alice') => new SignUp(store.uow, store.accounts, issueKey(), store.clock).execute(name);
  const authenticate = (key: string) => new Authenticate(store.apiKeys, store.secrets, store.clock, cache).execute(key);
  /** The account a key authenticates, or null (unknown, revoked, expired). */
  const accountOf = async (key: string) => {
    const outcome = await authenticate(key);
    return outcome && outcome !== 'expired' ? outcome.account : null;
  };
  const later = (ms: number) => store.clock.set(new Date(store.clock.now().getTime() + ms));
  const manage = () => new ManageApiKeys(store.uow, store.apiKeys, store.clock, store.keyRevocations, cache);
  const ensureAdmin = (key: string, options?: { bootstrap?: boolean; onRevoked?: (count: number) => void }) =>
    new EnsureAdministrator(
      store.uow,
      store.accounts,
      store.apiKeys,
      store.secrets,
      store.clock,
      store.keyRevocations,
      cache,
    ).execute(key, options);

  describe('SignUp', () => {
    it('creates a customer with one key; the secret is returned, only its hash stored', async () => {
      const { account, apiKey, secret } = await signUp(' Alice ');
      expect(account.toSnapshot()).toEqual({
        id: expect.any(Number),
        name: 'Alice',
        role: 'customer',
        createdAt: store.clock.now(),
      });
      expect(apiKey.accountId).toBe(account.id);
      expect(apiKey.hash).toBe(store.secrets.describe(secret).hash);
      expect(apiKey.hash).not.toContain(secret);
      expect((await accountOf(secret))?.id).toBe(account.id);
    });

    it('refuses a blank name and stores nothing', async () => {
      await expect(signUp('  ')).rejects.toMatchObject({ kind: 'invalid' });
      expect(store.db.tables.accounts.size).toBe(0);
    });
  });

  describe('IssueApiKey', () => {
    it('adds a key up to the limit of active keys, then refuses (too_many_keys) storing nothing', async () => {
      const { account } = await signUp();
      for (let i = 1; i < LIMITS.activeApiKeys.max; i++) await issueKey().execute(account.id);
      expect(await store.apiKeys.countActiveForAccount(account.id, store.clock.now())).toBe(LIMITS.activeApiKeys.max);
      await expect(issueKey().execute(account.id)).rejects.toBeInstanceOf(TooManyApiKeysError);
      expect(store.db.tables.apiKeys.size).toBe(LIMITS.activeApiKeys.max);
    });

    it('a revoked key frees its place', async () => {
      const { account } = await signUp();
      for (let i = 1; i < LIMITS.activeApiKeys.max; i++) await issueKey().execute(account.id);
      const [first] = (await manage().list(account.id, { limit: 1 })).items;
      await manage().revoke(account.id, first.id);
      expect((await issueKey().execute(account.id)).apiKey.accountId).toBe(account.id);
    });

    it('names the key, bounds its scopes and expiry; without a request: no name, full, no expiry', async () => {
      const { account, apiKey } = await signUp();
      expect(apiKey.toSnapshot()).toMatchObject({ name: null, scopes: ['full'], expiresAt: null });
      const expiresAt = new Date(store.clock.now().getTime() + 3_600_000);
      const { apiKey: ci } = await issueKey().execute(account.id, { name: 'CI', scopes: ['read'], expiresAt });
      expect(store.db.tables.apiKeys.get(ci.id)).toMatchObject({ name: 'CI', scopes: ['read'], expiresAt });
    });

    it('a key creates keys only with scopes it has itself; refused, nothing is stored', async () => {
      const { account } = await signUp();
      const full = { scopes: ['full'] as const, expiresAt: null };
      const read = { scopes: ['read'] as const, expiresAt: null };
      expect((await issueKey().execute(account.id, { scopes: ['read'] }, full)).apiKey.scopes).toEqual(['read']);
      expect((await issueKey().execute(account.id, { scopes: ['read'] }, read)).apiKey.scopes).toEqual(['read']);
      await expect(issueKey().execute(account.id, {}, read)).rejects.toMatchObject({
        kind: 'insufficient_scope',
        needed: 'full',
      });
      await expect(issueKey().execute(account.id, { scopes: ['full'] }, read)).rejects.toBeInstanceOf(
        InsufficientScopeError,
      );
      expect(store.db.tables.apiKeys.size).toBe(3);
    });

    it('refuses an expiresAt in the past (invalid, naming expiresAt), storing nothing', async () => {
      const { account } = await signUp();
      const expiresAt = new Date(store.clock.now().getTime() - 1);
      await expect(issueKey().execute(account.id, { expiresAt })).rejects.toMatchObject({
        kind: 'invalid',
        field: 'expiresAt',
      });
      expect(store.db.tables.apiKeys.size).toBe(1);
    });

    it('an expired key frees its place under the limit', async () => {
      const { account } = await signUp();
      const expiresAt = new Date(store.clock.now().getTime() + 60_000);
      for (let i = 1; i < LIMITS.activeApiKeys.max; i++) await issueKey().execute(account.id, { expiresAt });
      await expect(issueKey().execute(account.id)).rejects.toBeInstanceOf(TooManyApiKeysError);
      later(60_000);
      expect((await issueKey().execute(account.id)).apiKey.accountId).toBe(account.id);
    });

    it('fails loudly for an account that does not exist', async () => {
      await expect(issueKey().execute(404)).rejects.toThrow(/vanished/);
    });
  });

  describe('ManageApiKeys', () => {
    it('revokes a key: it no longer authenticates nor is listed', async () => {
      const { account, apiKey, secret } = await signUp();
      const second = await issueKey().execute(account.id);
      await manage().revoke(account.id, apiKey.id);
      expect(await authenticate(secret)).toBeNull();
      expect((await accountOf(second.secret))?.id).toBe(account.id);
      expect((await manage().list(account.id, { limit: 10 })).items.map((k) => k.id)).toEqual([second.apiKey.id]);
    });

    it("refuses another account's key, an unknown one and a revoked one (api key not found)", async () => {
      const alice = await signUp('Alice');
      const bob = await signUp('Bob');
      await expect(manage().revoke(bob.account.id, alice.apiKey.id)).rejects.toBeInstanceOf(ApiKeyNotFoundError);
      await expect(manage().revoke(alice.account.id, 404)).rejects.toBeInstanceOf(ApiKeyNotFoundError);
      await manage().revoke(alice.account.id, alice.apiKey.id);
      await expect(manage().revoke(alice.account.id, alice.apiKey.id)).rejects.toBeInstanceOf(ApiKeyNotFoundError);
    });
  });

  describe('Authenticate', () => {
    it("answers the key's account, id, scopes and expiry", async () => {
      const { account } = await signUp();
      const expiresAt = new Date(store.clock.now().getTime() + 60_000);
      const { apiKey, secret } = await issueKey().execute(account.id, { scopes: ['read'], expiresAt });
      expect(await authenticate(secret)).toEqual({ account, keyId: apiKey.id, scopes: ['read'], expiresAt });
    });

    it("answers 'expired' from expiresAt on, whether the key was cached or not, and records no use", async () => {
      const { account } = await signUp();
      const expiresAt = new Date(store.clock.now().getTime() + 2_000);
      const cached = await issueKey().execute(account.id, { expiresAt });
      const uncached = await issueKey().execute(account.id, { expiresAt });
      expect(await accountOf(cached.secret)).not.toBeNull();
      expect(cache.get(store.secrets.describe(cached.secret).hash)).not.toBeNull();
      later(1_999);
      expect(await accountOf(cached.secret)).not.toBeNull();
      later(1);
      const touch = jest.spyOn(store.apiKeys, 'touch');
      expect(await authenticate(cached.secret)).toBe('expired');
      expect(await authenticate(uncached.secret)).toBe('expired');
      expect(touch).not.toHaveBeenCalled();
    });

    it('answers null for an unknown key, and records the use of a known one', async () => {
      expect(await authenticate('psk_unknown')).toBeNull();
      const { apiKey, secret } = await signUp();
      await authenticate(secret);
      expect(store.db.tables.apiKeys.get(apiKey.id)?.lastUsedAt).toEqual(store.clock.now());
    });
  });

  describe('Authenticate with the cache of verified keys', () => {
    const hashOf = (secret: string) => store.secrets.describe(secret).hash;
    const lookups = () => jest.spyOn(store.apiKeys, 'findByHash');

    it('answers a cached key without the repository, and still records its use', async () => {
      const { account, apiKey, secret } = await signUp();
      const findByHash = lookups();
      const touch = jest.spyOn(store.apiKeys, 'touch');
      expect((await accountOf(secret))?.id).toBe(account.id);
      expect((await accountOf(secret))?.id).toBe(account.id);
      expect(findByHash).toHaveBeenCalledTimes(1);
      expect(findByHash).toHaveBeenCalledWith(hashOf(secret));
      expect(touch.mock.calls).toEqual([
        [apiKey.id, store.clock.now()],
        [apiKey.id, store.clock.now()],
      ]);
    });

    it('keeps a key for the configured seconds by the Clock, then looks it up again', async () => {
      const { secret } = await signUp();
      const findByHash = lookups();
      await authenticate(secret);
      later(4_999);
      await authenticate(secret);
      expect(findByHash).toHaveBeenCalledTimes(1);
      later(1);
      await authenticate(secret);
      expect(findByHash).toHaveBeenCalledTimes(2);
    });

    it('caches neither unknown nor revoked keys', async () => {
      const { account, apiKey, secret } = await signUp();
      await manage().revoke(account.id, apiKey.id);
      const findByHash = lookups();
      for (const key of ['psk_unknown', 'psk_unknown', secret, secret]) expect(await authenticate(key)).toBeNull();
      expect(findByHash).toHaveBeenCalledTimes(4);
      expect(cache.size).toBe(0);
    });

    it('holds at most maxEntries keys, the oldest making room', async () => {
      const { account, secret: first } = await signUp();
      const others = [];
      for (let i = 0; i < 3; i++) others.push((await issueKey().execute(account.id)).secret);
      for (const secret of [first, ...others]) await authenticate(secret);
      expect(cache.size).toBe(3);
      const findByHash = lookups();
      await authenticate(others[2]);
      expect(findByHash).not.toHaveBeenCalled();
      await authenticate(first);
      expect(findByHash).toHaveBeenCalledTimes(1);
    });

    it('refuses a key revoked by another instance once its announcement arrives', async () => {
      const { apiKey, secret } = await signUp();
      await authenticate(secret);
      // Another instance revokes it: the row changes, and its announcement reaches this one.
      store.db.tables.apiKeys.set(apiKey.id, { ...apiKey.toSnapshot(), revokedAt: store.clock.now() });
      store.keyRevocations.deliver([hashOf(secret)]);
      expect(await authenticate(secret)).toBeNull();
    });

    it('revoking here refuses the key at once and announces its hash to the other instances', async () => {
      const { account, apiKey, secret } = await signUp();
      await authenticate(secret);
      await manage().revoke(account.id, apiKey.id);
      expect(store.keyRevocations.announced).toEqual([[hashOf(secret)]]);
      expect(await authenticate(secret)).toBeNull();
    });

    it('does not keep what a lookup read before a revocation that arrived while it ran', async () => {
      const { secret } = await signUp();
      const read = store.apiKeys.findByHash.bind(store.apiKeys);
      const findByHash = lookups();
      findByHash.mockImplementationOnce(async (hash) => {
        const found = await read(hash);
        store.keyRevocations.deliver([hash]);
        return found;
      });
      await authenticate(secret);
      await authenticate(secret);
      expect(findByHash).toHaveBeenCalledTimes(2);
    });

    it('serves nothing from the cache while revocations are not received, and starts afresh after', async () => {
      const { secret } = await signUp();
      await authenticate(secret);
      const findByHash = lookups();
      store.keyRevocations.disconnect();
      await authenticate(secret);
      await authenticate(secret);
      expect(findByHash).toHaveBeenCalledTimes(2);
      store.keyRevocations.reconnect();
      await authenticate(secret);
      await authenticate(secret);
      expect(findByHash).toHaveBeenCalledTimes(3);
    });

    it('checks expiry on every hit: a cached key is not served from its expiresAt on, though fresh', async () => {
      cache = new VerifiedKeyCache(store.keyRevocations, store.clock, new VerifiedKeyCacheSettings(60));
      const { account } = await signUp();
      const expiresAt = new Date(store.clock.now().getTime() + 1_000);
      const { secret } = await issueKey().execute(account.id, { expiresAt });
      await authenticate(secret);
      const hash = store.secrets.describe(secret).hash;
      expect(cache.get(hash)?.expiresAt).toEqual(expiresAt);
      later(1_000);
      expect(cache.get(hash)).toBeNull();
      expect(await authenticate(secret)).toBe('expired');
    });

    it('caches nothing with 0 seconds', async () => {
      cache = new VerifiedKeyCache(store.keyRevocations, store.clock, new VerifiedKeyCacheSettings(0));
      const { secret } = await signUp();
      const findByHash = lookups();
      await authenticate(secret);
      await authenticate(secret);
      expect(findByHash).toHaveBeenCalledTimes(2);
    });

    it('rotating ADMIN_API_KEY announces the previous key, which is refused at once', async () => {
      await ensureAdmin('psk_admin_one');
      expect(await authenticate('psk_admin_one')).not.toBeNull();
      await ensureAdmin('psk_admin_two');
      expect(store.keyRevocations.announced).toEqual([[hashOf('psk_admin_one')]]);
      expect(await authenticate('psk_admin_one')).toBeNull();
      expect(await ensureAdmin('psk_admin_two')).toBe('existing');
      expect(store.keyRevocations.announced).toHaveLength(1);
    });
  });

  describe('EnsureAdministrator', () => {
    const adminOf = async (key: string) => (await accountOf(key)) as Account;

    it('creates an administrator holding the key, once: a restart finds it existing', async () => {
      expect(await ensureAdmin('psk_admin_one')).toBe('created');
      expect((await adminOf('psk_admin_one')).isAdmin).toBe(true);
      expect(await ensureAdmin('psk_admin_one')).toBe('existing');
      expect(store.db.tables.accounts.size).toBe(1);
    });

    it('a new key goes to the same administrator and revokes the previous one, and says so', async () => {
      const revoked: number[] = [];
      await ensureAdmin('psk_admin_one', { onRevoked: (count) => revoked.push(count) });
      expect(revoked).toEqual([]);
      const admin = await adminOf('psk_admin_one');
      expect(await ensureAdmin('psk_admin_two', { onRevoked: (count) => revoked.push(count) })).toBe('created');
      expect(revoked).toEqual([1]);
      expect((await adminOf('psk_admin_two')).id).toBe(admin.id);
      expect(await authenticate('psk_admin_one')).toBeNull();
    });

    it("the seed's key (not a bootstrap key) and ADMIN_API_KEY coexist, whichever comes first", async () => {
      expect(await ensureAdmin('psk_seed_one', { bootstrap: false })).toBe('created');
      const revoked: number[] = [];
      expect(await ensureAdmin('psk_admin_one', { onRevoked: (count) => revoked.push(count) })).toBe('created');
      expect(revoked).toEqual([]); // nothing to say: the seed's key is not revoked
      expect(await ensureAdmin('psk_admin_two')).toBe('created'); // a rotation revokes the previous ADMIN_API_KEY only
      expect(await authenticate('psk_admin_one')).toBeNull();
      expect((await adminOf('psk_seed_one')).isAdmin).toBe(true);
      expect((await adminOf('psk_admin_two')).isAdmin).toBe(true);
      expect(await ensureAdmin('psk_seed_two', { bootstrap: false })).toBe('created'); // a seed after: revokes none
      expect((await adminOf('psk_admin_two')).isAdmin).toBe(true);
      expect((await adminOf('psk_seed_one')).isAdmin).toBe(true);
      // Two administrators: the seed's keys are never ADMIN_API_KEY's account's.
      expect((await adminOf('psk_seed_one')).id).not.toBe((await adminOf('psk_admin_two')).id);
    });

    it('going back to a revoked key keeps it revoked and the newer key working', async () => {
      await ensureAdmin('psk_admin_one');
      await ensureAdmin('psk_admin_two');
      expect(await ensureAdmin('psk_admin_one')).toBe('revoked');
      expect(await authenticate('psk_admin_one')).toBeNull();
      expect((await adminOf('psk_admin_two')).isAdmin).toBe(true);
    });
  });
});
