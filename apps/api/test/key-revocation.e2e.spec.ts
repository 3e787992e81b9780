import { expectError, TestApp } from './support/test-app';

/** The bound the service promises: a revoked key is refused by every instance within this. */
const REVOCATION_BOUND_MS = 1000;
/** Far longer than the bound: an instance that missed the revocation would keep serving the key. */
const CACHE_SECONDS = 60;

/**
 * Two instances of the service on one database, each caching verified keys (API_KEY_CACHE_SECONDS,
 * here long enough that only the revocation signal can explain a refusal within the bound).
 */
describe('API key cache and revocation across two instances (one database)', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    a = await TestApp.start({ auth: { apiKeyCacheSeconds: CACHE_SECONDS } });
    b = await TestApp.startOn(a.databaseUrl, { auth: { apiKeyCacheSeconds: CACHE_SECONDS } });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  /** A customer's first key (to manage with) and a second one (to revoke): [manager, revocable, its id]. */
  async function twoKeys(api: TestApp): Promise<[string, string, number]> {
    const { key } = await api.customer();
    const second = await api.post('/accounts/me/api-keys', { key });
    expect(second.status).toBe(201);
    return [key, second.body.key, second.body.id];
  }

  /** Polls `api` with `key` until it is refused; how long after `since` that happened (fails past `deadlineMs`). */
  async function refusedAfter(api: TestApp, key: string, since: number, deadlineMs = 10_000): Promise<number> {
    for (;;) {
      const response = await api.get('/accounts/me', { key });
      const elapsed = Date.now() - since;
      if (response.status === 401) return elapsed;
      expect(response.status).toBe(200);
      if (elapsed > deadlineMs) throw new Error(`still accepted ${elapsed} ms after the revocation`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('a key revoked through one instance is refused by the other within 1 s, though it had it cached', async () => {
    const [manager, revocable, keyId] = await twoKeys(a);
    // Instance B verifies the key and caches it.
    expect((await b.get('/accounts/me', { key: revocable })).status).toBe(200);
    expect((await b.get('/accounts/me', { key: revocable })).status).toBe(200);
    expect((await a.delete(`/accounts/me/api-keys/${keyId}`, { key: manager })).status).toBe(204);
    const revokedAt = Date.now();
    expect(await refusedAfter(b, revocable, revokedAt)).toBeLessThanOrEqual(REVOCATION_BOUND_MS);
    expectError(await b.get('/accounts/me', { key: revocable }), 401, 'unauthorized');
    // The other key of the account is untouched, on both.
    expect((await b.get('/accounts/me', { key: manager })).status).toBe(200);
    expect((await a.get('/accounts/me', { key: manager })).status).toBe(200);
  });

  it('a key revoked through the instance that has it cached is refused from the very next request', async () => {
    const [manager, revocable, keyId] = await twoKeys(a);
    expect((await a.get('/accounts/me', { key: revocable })).status).toBe(200);
    expect((await a.delete(`/accounts/me/api-keys/${keyId}`, { key: manager })).status).toBe(204);
    expectError(await a.get('/accounts/me', { key: revocable }), 401, 'unauthorized');
  });

  it('a key revoking itself is refused from its next request', async () => {
    const { key } = await b.customer();
    const [{ id }] = (await b.get('/accounts/me/api-keys', { key })).body;
    expect((await b.delete(`/accounts/me/api-keys/${id}`, { key })).status).toBe(204);
    expectError(await b.get('/accounts/me', { key }), 401, 'unauthorized');
  });

  it('a key past its expiresAt is refused by both instances (401 api_key_expired), cached, unrevoked', async () => {
    const { key: manager } = await a.customer();
    // Long enough to be verified and cached by both instances first, on a busy machine.
    const expiresAt = new Date(Date.now() + 4_000);
    const created = await a.post('/accounts/me/api-keys', {
      key: manager,
      body: { name: 'short-lived', expiresAt: expiresAt.toISOString() },
    });
    expect(created.status).toBe(201);
    const expiring: string = created.body.key;
    for (const api of [a, b, a, b]) expect((await api.get('/accounts/me', { key: expiring })).status).toBe(200);
    expect(Date.now()).toBeLessThan(expiresAt.getTime()); // both had it cached before it expired
    await new Promise((resolve) => setTimeout(resolve, expiresAt.getTime() - Date.now() + 50));
    for (const api of [b, a]) {
      const refused = await api.get('/accounts/me', { key: expiring });
      expectError(refused, 401, 'api_key_expired');
      expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="petstore"');
    }
    // No revocation did it: the row is not revoked, and the owner still sees the key, expired, in its list.
    const [{ revoked_at }] = await a.sql('SELECT revoked_at FROM api_keys WHERE id = $1', [created.body.id]);
    expect(revoked_at).toBeNull();
    const listed = (await b.get('/accounts/me/api-keys', { key: manager })).body;
    expect(listed).toContainEqual(
      expect.objectContaining({ id: created.body.id, name: 'short-lived', expiresAt: expiresAt.toISOString() }),
    );
    // The owner's other key is untouched.
    expect((await b.get('/accounts/me', { key: manager })).status).toBe(200);
  });

  it('a new ADMIN_API_KEY started elsewhere revokes the previous one on the running instances within 1 s', async () => {
    const previous = 'key-revocation-admin-previous-0123456789';
    const next = 'key-revocation-admin-next-0123456789abcdef';
    const first = await TestApp.startOn(a.databaseUrl, {
      auth: { apiKeyCacheSeconds: CACHE_SECONDS, adminApiKey: previous },
    });
    await first.close();
    expect((await b.get('/accounts/me', { key: previous })).status).toBe(200);
    const rotating = await TestApp.startOn(a.databaseUrl, {
      auth: { apiKeyCacheSeconds: CACHE_SECONDS, adminApiKey: next },
    });
    try {
      const rotatedAt = Date.now();
      expect(await refusedAfter(b, previous, rotatedAt)).toBeLessThanOrEqual(REVOCATION_BOUND_MS);
      expect((await b.get('/accounts/me', { key: next })).status).toBe(200);
    } finally {
      await rotating.close();
    }
  });
});
