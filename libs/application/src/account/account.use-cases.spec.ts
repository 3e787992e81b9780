import { Account, ApiKeyNotFoundError, MAX_ACTIVE_API_KEYS, TooManyApiKeysError } from '@petstore/domain';
import { inMemoryPetstore, InMemoryPetstore } from '../../testing';
import { Authenticate, EnsureAdministrator, IssueApiKey, ManageApiKeys, SignUp } from './account.use-cases';

describe('account use cases (in-memory ports)', () => {
  let store: InMemoryPetstore;
  beforeEach(() => (store = inMemoryPetstore()));

  const issueKey = () => new IssueApiKey(store.uow, store.accounts, store.apiKeys, store.secrets, store.clock);
  const signUp = (name = 'Alice') => new SignUp(store.uow, store.accounts, issueKey(), store.clock).execute(name);
  const authenticate = (key: string) => new Authenticate(store.apiKeys, store.secrets, store.clock).execute(key);
  const manage = () => new ManageApiKeys(store.apiKeys, store.clock);
  const ensureAdmin = (key: string) =>
    new EnsureAdministrator(store.uow, store.accounts, store.apiKeys, store.secrets, store.clock).execute(key);

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
      expect((await authenticate(secret))?.id).toBe(account.id);
    });

    it('refuses a blank name and stores nothing', async () => {
      await expect(signUp('  ')).rejects.toMatchObject({ kind: 'invalid' });
      expect(store.db.tables.accounts.size).toBe(0);
    });
  });

  describe('IssueApiKey', () => {
    it('adds a key up to the limit of active keys, then refuses (too_many_keys) storing nothing', async () => {
      const { account } = await signUp();
      for (let i = 1; i < MAX_ACTIVE_API_KEYS; i++) await issueKey().execute(account.id);
      expect(await store.apiKeys.countActiveForAccount(account.id)).toBe(MAX_ACTIVE_API_KEYS);
      await expect(issueKey().execute(account.id)).rejects.toBeInstanceOf(TooManyApiKeysError);
      expect(store.db.tables.apiKeys.size).toBe(MAX_ACTIVE_API_KEYS);
    });

    it('a revoked key frees its place', async () => {
      const { account } = await signUp();
      for (let i = 1; i < MAX_ACTIVE_API_KEYS; i++) await issueKey().execute(account.id);
      const [first] = (await manage().list(account.id, { limit: 1 })).items;
      await manage().revoke(account.id, first.id);
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
      expect((await authenticate(second.secret))?.id).toBe(account.id);
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
    it('answers null for an unknown key, and records the use of a known one', async () => {
      expect(await authenticate('psk_unknown')).toBeNull();
      const { apiKey, secret } = await signUp();
      await authenticate(secret);
      expect(store.db.tables.apiKeys.get(apiKey.id)?.lastUsedAt).toEqual(store.clock.now());
    });
  });

  describe('EnsureAdministrator', () => {
    const adminOf = async (key: string) => (await authenticate(key)) as Account;

    it('creates an administrator holding the key, once: a restart finds it existing', async () => {
      expect(await ensureAdmin('psk_admin_one')).toBe('created');
      expect((await adminOf('psk_admin_one')).isAdmin).toBe(true);
      expect(await ensureAdmin('psk_admin_one')).toBe('existing');
      expect(store.db.tables.accounts.size).toBe(1);
    });

    it('a new key goes to the same administrator and revokes the previous one', async () => {
      await ensureAdmin('psk_admin_one');
      const admin = await adminOf('psk_admin_one');
      expect(await ensureAdmin('psk_admin_two')).toBe('created');
      expect((await adminOf('psk_admin_two')).id).toBe(admin.id);
      expect(await authenticate('psk_admin_one')).toBeNull();
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
