import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { StoreFixtures } from './support/store-fixtures';
import { ADMIN_KEY, expectError, TestApp, TestResponse } from './support/test-app';

type Json = Record<string, unknown>;
type Operation = {
  operationId: string;
  parameters?: { in: string; name: string }[];
  requestBody?: { content: { 'application/json': { example?: unknown } } };
  responses: Record<string, { description: string; content?: { 'application/json': { schema: Json } } }>;
  security?: unknown[];
  'x-idempotency-exempt'?: string;
  'x-shows-secret'?: boolean;
};
type Post = { template: string; operation: Operation };

const keyHash = (key: string) => createHash('sha256').update(key, 'utf8').digest('hex');
const withKey = (key: string) => ({ 'Idempotency-Key': key });

/**
 * `Idempotency-Key` on every POST (issue 21 item 5), walked over every POST operation the service describes, so an
 * operation added later is covered as it is declared: the description says so, a replay is the first answer again
 * (status, bytes, `Location`, `Idempotent-Replayed: true`) and creates nothing more, the key with another request is
 * a 422, and no secret a response shows is kept in clear in the idempotency table.
 */
describe('Idempotency-Key on every POST (HTTP, real PostgreSQL)', () => {
  let api: TestApp;
  let store: StoreFixtures;
  let receiver: Server;
  let hookUrl: string;
  let posts: Post[];
  let schemas: Record<string, Json>;

  beforeAll(async () => {
    api = await TestApp.start({ webhooks: { allowPrivate: true } });
    store = await StoreFixtures.on(api);
    receiver = createServer((_, res) => res.end());
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const document = (await api.get('/openapi.json')).body as {
      paths: Record<string, Record<string, Operation>>;
      components: { schemas: Record<string, Json> };
    };
    schemas = document.components.schemas;
    posts = Object.entries(document.paths).flatMap(([template, item]) =>
      item['post'] ? [{ template, operation: item['post'] }] : [],
    );
  });
  afterAll(async () => {
    await store.close();
    await api.close();
    await new Promise((resolve) => receiver.close(resolve));
  });

  const count = async (table: string) => Number((await api.sql(`SELECT count(*) AS n FROM ${table}`))[0].n);
  const tableText = async () => JSON.stringify(await api.sql(`SELECT * FROM idempotency_keys`));

  /** A valid body for each POST: the description's example, or one that holds in this database. */
  const bodies: Record<string, () => Promise<unknown>> = {
    '/categories': async () => ({ name: `Walk ${randomUUID()}` }),
    '/pets': async () => {
      const category = await api.post('/categories', { key: ADMIN_KEY, body: { name: `Walk ${randomUUID()}` } });
      return { name: 'Walker', categoryId: category.body.id };
    },
    '/store/orders': async () => ({ petId: await store.pet({ quantity: 5 }), quantity: 1 }),
    '/webhooks/endpoints': async () => ({ url: `${hookUrl}/${randomUUID()}`, events: ['order.placed'] }),
    // The description's example is a fixed time, which will one day be older than the events are kept (a 400).
    '/webhooks/endpoints/{endpointId}/recover': async () => ({ since: new Date(Date.now() - 3_600_000).toISOString() }),
    // The description's example has a fixed expiry, which will one day be in the past (a 400): a week from now.
    '/accounts/me/api-keys': async () => ({
      name: 'walk',
      scopes: ['read'],
      expiresAt: new Date(Date.now() + 7 * 24 * 3600 * 1000).toISOString(),
    }),
  };

  /** An id for each path parameter, of a resource the administrator may act on. */
  const ids: Record<string, () => Promise<number>> = {
    petId: () => store.pet({ quantity: 5 }),
    endpointId: async () => {
      const created = await api.post('/webhooks/endpoints', {
        key: ADMIN_KEY,
        body: { url: `${hookUrl}/${randomUUID()}`, events: ['order.placed'] },
      });
      return created.body.id;
    },
    deliveryId: async () => {
      const endpointId = await ids['endpointId']();
      const [event] = await api.sql(
        `INSERT INTO webhook_events (id, type, endpoint_id, body, created_at)
         VALUES (gen_random_uuid(), 'ping', $1, '{}', now()) RETURNING id`,
        [endpointId],
      );
      const [delivery] = await api.sql(
        `INSERT INTO webhook_deliveries (event_id, endpoint_id, status, attempts, created_at)
         VALUES ($1, $2, 'failed', 9, now()) RETURNING id`,
        [event.id, endpointId],
      );
      return Number(delivery.id);
    },
  };

  /** The request to send to one POST: its path with ids, its body, and the key (none for a public operation). */
  async function requestFor({ template, operation }: Post): Promise<{ path: string; body: unknown; key?: string }> {
    let path = template;
    const pathIds: Record<string, number> = {};
    for (const name of (operation.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name)) {
      if (!ids[name]) throw new Error(`POST ${template}: teach this walk how to find a {${name}} (ids above).`);
      pathIds[name] ??= await ids[name]();
      if (name === 'deliveryId') {
        // A delivery belongs to its endpoint: the same one in the path.
        const [row] = await api.sql(`SELECT endpoint_id FROM webhook_deliveries WHERE id = $1`, [pathIds[name]]);
        pathIds['endpointId'] = Number(row.endpoint_id);
      }
    }
    for (const [name, id] of Object.entries(pathIds)) path = path.replace(`{${name}}`, String(id));
    const body = bodies[template]
      ? await bodies[template]()
      : operation.requestBody?.content['application/json'].example;
    return { path, body, key: operation.security?.length ? ADMIN_KEY : undefined };
  }

  /** Every string a response shows under a name that says it is a secret (`secret`, `key`). */
  function secretsIn(value: unknown, name = ''): string[] {
    if (typeof value === 'string') return /secret|^key$/i.test(name) && value.length >= 16 ? [value] : [];
    if (Array.isArray(value)) return value.flatMap((v) => secretsIn(v, name));
    if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => secretsIn(v, k));
    return [];
  }

  /** Property names of a schema, through `$ref`, `allOf` and arrays. */
  function propertyNames(schema: Json | undefined, seen = new Set<string>()): string[] {
    if (!schema) return [];
    const ref = schema['$ref'] as string | undefined;
    if (ref) {
      if (seen.has(ref)) return [];
      seen.add(ref);
      return propertyNames(schemas[ref.replace('#/components/schemas/', '')], seen);
    }
    const properties = (schema['properties'] ?? {}) as Record<string, Json>;
    return [
      ...Object.keys(properties),
      ...Object.values(properties).flatMap((p) => propertyNames(p, seen)),
      ...((schema['allOf'] ?? []) as Json[]).flatMap((s) => propertyNames(s, seen)),
      ...propertyNames(schema['items'] as Json | undefined, seen),
    ];
  }

  it('describes the Idempotency-Key header and its 409/422 answers on every POST (none is exempt today)', () => {
    expect(posts.length).toBeGreaterThanOrEqual(8);
    for (const { template, operation } of posts) {
      const where = `POST ${template}`;
      const exempt = operation['x-idempotency-exempt'];
      if (exempt !== undefined) {
        expect({ where, reason: exempt.trim().length > 0 }).toEqual({ where, reason: true });
        continue;
      }
      const header = (operation.parameters ?? []).find((p) => p.in === 'header' && p.name === 'Idempotency-Key');
      expect({ where, header: !!header }).toEqual({ where, header: true });
      expect({ where, 409: operation.responses['409']?.description }).toEqual({
        where,
        409: expect.stringContaining('`idempotency_key_in_use`'),
      });
      expect({ where, 422: operation.responses['422']?.description }).toEqual({
        where,
        422: expect.stringContaining('`idempotency_key_reused`'),
      });
      // A response that shows a secret is marked, so that its replay is kept sealed.
      const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'))?.[1];
      const names = propertyNames(success?.content?.['application/json'].schema);
      const showsSecret = names.includes('secret') || names.includes('key');
      expect({ where, sealed: operation['x-shows-secret'] === true }).toEqual({ where, sealed: showsSecret });
    }
    expect(posts.filter((p) => p.operation['x-shows-secret']).map((p) => p.template)).toEqual(
      expect.arrayContaining(['/accounts', '/accounts/me/api-keys', '/webhooks/endpoints']),
    );
  });

  it('replays every POST: the same status, bytes and Location, Idempotent-Replayed: true, nothing more', async () => {
    const done: { template: string; key: string; scope: string }[] = [];
    for (const post of posts) {
      if (post.operation['x-idempotency-exempt'] !== undefined) continue;
      const where = `POST ${post.template}`;
      const { path, body, key: apiKey } = await requestFor(post);
      const key = randomUUID();
      const send = (idempotencyKey: string, sent = body): Promise<TestResponse> =>
        api.post(path, { key: apiKey, body: sent, headers: withKey(idempotencyKey) });

      const first = await send(key);
      expect({ where, status: first.status, body: first.status < 300 ? 'ok' : first.body }).toEqual({
        where,
        status: expect.any(Number),
        body: 'ok',
      });
      const before = await tableText();
      const rows = await count('idempotency_keys');
      const again = await send(key);
      expect({
        where,
        status: again.status,
        text: again.text,
        replayed: again.headers.get('idempotent-replayed'),
        location: again.headers.get('location'),
      }).toEqual({
        where,
        status: first.status,
        text: first.text,
        replayed: 'true',
        location: first.headers.get('location'),
      });
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      // Nothing new was kept (a replay stores nothing), so nothing new was done.
      expect({ where, rows: await count('idempotency_keys') }).toEqual({ where, rows });
      expect(await tableText()).toBe(before);

      // A secret the response shows is not in the idempotency table in clear, nor is the key itself.
      const secrets = secretsIn(first.body);
      expect({ where, sealed: post.operation['x-shows-secret'] === true }).toEqual({ where, sealed: !!secrets.length });
      for (const secret of secrets)
        expect({ where, inClear: before.includes(secret) }).toEqual({ where, inClear: false });
      expect(before).not.toContain(key);
      expect(before).toContain(keyHash(key));

      // The same key with another request (another operation, in the same scope) is refused and does nothing.
      const scope = apiKey ?? 'anonymous';
      const other = done.find((d) => d.scope === scope);
      if (other) {
        expectError(await send(other.key), 422, 'idempotency_key_reused');
        expect({ where, rows: await count('idempotency_keys') }).toEqual({ where, rows });
      }
      done.push({ template: post.template, key, scope });
    }
    expect(done.length).toBe(posts.length);
  });

  it('two concurrent POST /webhooks/endpoints with one key create one endpoint', async () => {
    const customer = await api.customer('Racer');
    const key = randomUUID();
    const body = { url: hookUrl, events: ['order.placed'] };
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        api.post('/webhooks/endpoints', { key: customer.key, body, headers: withKey(key) }),
      ),
    );
    const endpoints = await api.sql(`SELECT id FROM webhook_endpoints WHERE owner_id = $1`, [customer.id]);
    expect(endpoints).toHaveLength(1);
    const fresh = answers.filter((a) => a.status === 201 && a.headers.get('idempotent-replayed') === null);
    expect(fresh).toHaveLength(1);
    for (const answer of answers) {
      if (answer.status === 201) expect(answer.text).toBe(fresh[0].text);
      else expectError(answer, 409, 'idempotency_key_in_use');
    }
    expect(fresh[0].body.id).toBe(Number(endpoints[0].id));
  });

  it('concurrent POST /accounts with one key create one account (no API key: the key alone is the scope)', async () => {
    const accounts = await count('accounts');
    const key = randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => api.post('/accounts', { body: { name: 'Twice' }, headers: withKey(key) })),
    );
    expect(await count('accounts')).toBe(accounts + 1);
    const fresh = answers.filter((a) => a.status === 201 && a.headers.get('idempotent-replayed') === null);
    expect(fresh).toHaveLength(1);
    for (const answer of answers) {
      if (answer.status === 201) expect(answer.text).toBe(fresh[0].text);
      else expectError(answer, 409, 'idempotency_key_in_use');
    }
    // The replayed key is the account's own, and works.
    const replay = await api.post('/accounts', { body: { name: 'Twice' }, headers: withKey(key) });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect((await api.get('/accounts/me', { key: replay.body.apiKey.key })).body.id).toBe(fresh[0].body.account.id);
  });

  it('replays a sign-up to whoever presents its key and body, from any address (issue 36, 5e: decided)', async () => {
    const proxied = await TestApp.startOn(api.databaseUrl, { http: { trustProxy: true } });
    try {
      const key = randomUUID();
      const signUp = (address: string) =>
        proxied.post('/accounts', {
          body: { name: 'Roaming' },
          headers: { ...withKey(key), 'x-forwarded-for': address },
        });
      const first = await signUp('203.0.113.10'); // on Wi-Fi
      expect(first.status).toBe(201);
      const retried = await signUp('198.51.100.20'); // the retry, on mobile data
      expect(retried.status).toBe(201);
      expect(retried.headers.get('idempotent-replayed')).toBe('true');
      expect(retried.text).toBe(first.text);
    } finally {
      await proxied.close();
    }
  });

  it('with IDEMPOTENCY_KEY_PEPPER keeps keys as their HMAC under it, and replays as ever', async () => {
    const pepper = randomBytes(24).toString('hex');
    const peppered = await TestApp.startOn(api.databaseUrl, { auth: { idempotencyKeyPeppers: [pepper] } });
    try {
      const key = randomUUID();
      const signUp = () => peppered.post('/accounts', { body: { name: 'Peppered' }, headers: withKey(key) });
      const first = await signUp();
      expect(first.status).toBe(201);
      const hmac = createHmac('sha256', pepper).update(key, 'utf8').digest('hex');
      const rows = await api.sql(`SELECT key_hash, result FROM idempotency_keys WHERE key_hash = ANY($1)`, [
        [hmac, keyHash(key)],
      ]);
      expect(rows).toEqual([{ key_hash: hmac, result: expect.stringMatching(/^v2\./) }]);
      const replay = await signUp();
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.text).toBe(first.text);
    } finally {
      await peppered.close();
    }
  });

  it('anonymous keys: another body is 422, and they are apart from every account’s keys', async () => {
    const key = randomUUID();
    expect((await api.post('/accounts', { body: { name: 'First' }, headers: withKey(key) })).status).toBe(201);
    const accounts = await count('accounts');
    expectError(
      await api.post('/accounts', { body: { name: 'Second' }, headers: withKey(key) }),
      422,
      'idempotency_key_reused',
    );
    expect(await count('accounts')).toBe(accounts);
    // The same key under an account is that account's own: a fresh request, not a replay nor a 422.
    const mine = await api.post('/accounts/me/api-keys', { key: ADMIN_KEY, headers: withKey(key) });
    expect(mine.status).toBe(201);
    expect(mine.headers.get('idempotent-replayed')).toBeNull();
    await api.delete(`/accounts/me/api-keys/${mine.body.id}`, { key: ADMIN_KEY });
  });

  it('keeps a result that shows a secret sealed: neither the secret nor the key is in the table', async () => {
    const key = randomUUID();
    const signUp = await api.post('/accounts', { body: { name: 'Sealed' }, headers: withKey(key) });
    const secret: string = signUp.body.apiKey.key;
    const [row] = await api.sql(`SELECT * FROM idempotency_keys WHERE key_hash = $1`, [keyHash(key)]);
    expect(row).toEqual(
      expect.objectContaining({ account_id: null, result_sealed: true, result: expect.stringMatching(/^v1\./) }),
    );
    expect(JSON.stringify(row)).not.toContain(secret);
    expect(JSON.stringify(row)).not.toContain(key);
    expect(await tableText()).not.toContain(secret);

    const endpoint = await api.post('/webhooks/endpoints', {
      key: ADMIN_KEY,
      body: { url: hookUrl, events: ['order.placed'] },
      headers: withKey(key),
    });
    expect(endpoint.status).toBe(201);
    expect(await tableText()).not.toContain(endpoint.body.secret);
    expect(
      (
        await api.post('/webhooks/endpoints', {
          key: ADMIN_KEY,
          body: { url: hookUrl, events: ['order.placed'] },
          headers: withKey(key),
        })
      ).body.secret,
    ).toBe(endpoint.body.secret);
    await api.delete(`/webhooks/endpoints/${endpoint.body.id}`, { key: ADMIN_KEY });
  });

  it('a result that shows a secret replays to the key that asked for it only (an expiring key gets none)', async () => {
    const { key: lasting } = await api.customer('Two keys');
    const expiresAt = new Date(Date.now() + 24 * 3600 * 1000).toISOString();
    const expiring = (await api.post('/accounts/me/api-keys', { key: lasting, body: { expiresAt } })).body.key;
    const idempotencyKey = randomUUID();
    const make = (key: string) =>
      api.post('/accounts/me/api-keys', { key, body: { name: 'forever' }, headers: withKey(idempotencyKey) });
    const made = await make(lasting);
    expect(made.status).toBe(201);
    expect(made.body.expiresAt).toBeNull();
    const keys = async () => (await api.get('/accounts/me/api-keys', { key: lasting })).body.length as number;
    const before = await keys();

    // The expiring key presenting the same Idempotency-Key and body: another request, not a replay.
    const replayed = await make(expiring);
    expectError(replayed, 422, 'idempotency_key_reused');
    expect(replayed.text).not.toContain(made.body.key);
    expect(await keys()).toBe(before);
    // The key that asked still gets its answer again.
    const again = await make(lasting);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.key).toBe(made.body.key);

    // A record kept before results were scoped to a key (its fingerprint has no key id) is withheld from either.
    const legacyKey = randomUUID();
    const body = { name: 'legacy' };
    const legacy = await api.post('/accounts/me/api-keys', { key: lasting, body, headers: withKey(legacyKey) });
    expect(legacy.status).toBe(201);
    const unscoped = createHash('sha256').update('POST /accounts/me/api-keys\n{"name":"legacy"}').digest('hex');
    await api.sql(`UPDATE idempotency_keys SET fingerprint = $1 WHERE key_hash = $2`, [unscoped, keyHash(legacyKey)]);
    for (const key of [lasting, expiring]) {
      const answer = await api.post('/accounts/me/api-keys', { key, body, headers: withKey(legacyKey) });
      expectError(answer, 409, 'idempotency_replay_withheld');
      expect(answer.text).not.toContain(legacy.body.key);
    }
    expect(await keys()).toBe(before + 1);
  });

  it('a sealed result that does not open is 409 idempotency_replay_withheld, and nothing is done again', async () => {
    const key = randomUUID();
    expect((await api.post('/accounts', { body: { name: 'Withheld' }, headers: withKey(key) })).status).toBe(201);
    await api.sql(`UPDATE idempotency_keys SET result = 'v1.AAAA' WHERE key_hash = $1`, [keyHash(key)]);
    const accounts = await count('accounts');
    expectError(
      await api.post('/accounts', { body: { name: 'Withheld' }, headers: withKey(key) }),
      409,
      'idempotency_replay_withheld',
    );
    expect(await count('accounts')).toBe(accounts);
  });
});
