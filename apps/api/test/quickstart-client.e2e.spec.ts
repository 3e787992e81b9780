import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPetstoreClient, ORDER_FIELDS_ALWAYS_SENT, PetstoreApiError, unwrap } from '@petstore/client';
import { resetDatabase, testDatabaseUrl } from '@petstore/testing';
import { ApiProcess, ensureBuilt } from './support/built-app';

// Building (when run without CI's build first), starting the process and the delivery take a while.
jest.setTimeout(240_000);

const ADMIN_KEY = `quickstart-admin-${randomUUID()}`;

/** The README's quickstart, its lines exactly as there (a test below holds them equal), on `PETSTORE_URL`. */
async function quickstart() {
  // --- the README's quickstart ---
  const baseUrl = process.env['PETSTORE_URL'] ?? 'http://localhost:3000';
  const { data: signUp } = await createPetstoreClient({ baseUrl }).POST('/accounts', { body: { name: 'Ada' } });
  const api = createPetstoreClient({ baseUrl, apiKey: signUp.apiKey.key });
  const pets = [];
  for await (const pet of api.list('/pets', { status: ['available'], limit: 2 })) pets.push(pet); // follows Link
  const [pet] = pets;
  if (!pet) throw new Error('No pet is available: run `npm run seed` first.');
  const { data: order } = await api.POST('/store/orders', { body: { petId: pet.id, quantity: 1 } });
  let { data: message } = await api.POST('/messages', { body: { message: 'Hello, Petstore!' } });
  while (message.status === 'queued') {
    await new Promise((resolve) => setTimeout(resolve, 250));
    ({ data: message } = await api.GET('/messages/{messageId}', { params: { path: { messageId: message.id } } }));
  }
  await api.DELETE('/store/orders/{orderId}', { params: { path: { orderId: order.id } } }); // available again
  // --- end of the quickstart ---
  return { signUp, pets, order, message };
}

/** The lines between the markers of this file, and the README's TypeScript block without its import. */
function quickstartLines() {
  const own = readFileSync(__filename, 'utf8');
  const marked = own.slice(own.indexOf('// --- the README'), own.indexOf('// --- end of the quickstart'));
  const readme = readFileSync(join(__dirname, '../../../README.md'), 'utf8');
  const block = /```ts\nimport \{[^\n]*\} from '@petstore\/client';\n\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  const lines = (text: string) =>
    text
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean);
  return { spec: lines(marked).slice(1), readme: lines(block) };
}

/**
 * The README's quickstart, through the typed client (libs/client), against the built service as production runs
 * it, on this jest worker's PostgreSQL database. QUICKSTART_NODE: the Node.js binary that runs the service
 * (default: the one running the tests), so that CI can prove it on another Node.js version.
 */
describe('the quickstart through the typed client, against the built service', () => {
  let server: ApiProcess;

  beforeAll(async () => {
    ensureBuilt();
    const databaseUrl = await testDatabaseUrl();
    await resetDatabase(databaseUrl);
    server = await ApiProcess.start(
      { DATABASE_URL: databaseUrl, ADMIN_API_KEY: ADMIN_KEY, MESSAGE_WORKER: 'true', LOG_LEVEL: 'warn' },
      { node: process.env['QUICKSTART_NODE'] || process.execPath },
    );
    // The catalogue the customer browses: the administrator's part, not the quickstart's.
    const admin = createPetstoreClient({ baseUrl: server.baseUrl, apiKey: ADMIN_KEY });
    const dogs = await unwrap(admin.POST('/categories', { body: { name: 'Dogs' } }));
    for (const name of ['Rex', 'Fido', 'Laika']) {
      await admin.POST('/pets', { body: { name, categoryId: dogs.id, status: 'available' } });
    }
  });

  afterAll(async () => {
    expect(await server?.stop()).toBe(0);
  });

  it('runs the lines of the README, no more, no fewer', () => {
    const { spec, readme } = quickstartLines();
    expect(readme.length).toBeGreaterThan(5);
    expect(spec).toEqual(readme);
  });

  it('signs up, lists pets, places an order, sends a message and sees it delivered, then cancels: twice', async () => {
    process.env['PETSTORE_URL'] = server.baseUrl;
    const runs = [];
    // The quickstart waits for the delivery with no bound of its own: the test bounds it.
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`quickstart not done within 60 s:\n${server.log}`)), 60_000);
    });
    try {
      for (let run = 0; run < 2; run++) runs.push(await Promise.race([quickstart(), timeout]));
    } finally {
      clearTimeout(timer);
    }

    for (const { signUp, pets, order, message } of runs) {
      expect(signUp.apiKey.key).toMatch(/^psk_/);
      // Three pets, two per page: the iterator followed Link: rel="next".
      expect(pets.map((p) => p.name)).toEqual(['Rex', 'Fido', 'Laika']);
      expect(order).toEqual(expect.objectContaining({ petId: pets[0].id, quantity: 1, complete: false }));
      expect(message).toEqual(
        expect.objectContaining({ message: 'Hello, Petstore!', status: 'delivered', deliveredAt: expect.any(String) }),
      );
    }
    // The second run could order the same pet: the first one's cancel made it available again, with its unit back.
    const admin = createPetstoreClient({ baseUrl: server.baseUrl, apiKey: ADMIN_KEY });
    const { data: rex } = await admin.GET('/store/inventory/{petId}', {
      params: { path: { petId: runs[1].pets[0].id } },
    });
    expect(rex).toMatchObject({ quantity: 1 });
    expect(runs[1].order.id).not.toBe(runs[0].order.id);
  });

  /**
   * Issue 33: a POST whose response is lost, sent again by the client with the same Idempotency-Key, places ONE
   * order. The fetch sends each request to the real service; the first POST's answer is then dropped (read and thrown
   * away, as a connection cut after the server answered), or the request is dropped at once while the service still
   * works on it (the retry may find its key in use: 409 idempotency_key_in_use, retried too).
   */
  it.each(['after its answer', 'while the service works on it'] as const)(
    'places one order when the response is lost %s: the retry sends the same Idempotency-Key',
    async (when) => {
      const baseUrl = server.baseUrl;
      const { data: signUp } = await createPetstoreClient({ baseUrl }).POST('/accounts', { body: { name: 'Lost' } });
      const sent: string[] = [];
      let dropped = false;
      const api = createPetstoreClient({
        baseUrl,
        apiKey: signUp.apiKey.key,
        fetch: async (request) => {
          if (request.method === 'POST') sent.push(request.headers.get('idempotency-key') ?? '');
          if (request.method !== 'POST' || dropped) return fetch(request);
          dropped = true;
          const answer = fetch(request).then((response) => response.arrayBuffer());
          if (when === 'after its answer') await answer;
          else void answer.catch(() => undefined);
          throw new TypeError('fetch failed', { cause: new Error('ECONNRESET: the response was lost') });
        },
      });
      let petId = 0;
      for await (const pet of api.list('/pets', { name: 'Laika' })) petId = pet.id;
      const placed = await api.POST('/store/orders', { body: { petId, quantity: 1 } });

      expect(sent.length).toBeGreaterThanOrEqual(2);
      expect(new Set(sent)).toEqual(new Set([placed.idempotencyKey]));
      const orders = [];
      for await (const order of api.list('/store/orders')) orders.push(order);
      expect(orders.map((order) => order.id)).toEqual([placed.data.id]);
      if (when === 'after its answer') expect(placed.response.headers.get('idempotent-replayed')).toBe('true');
      // The response types say these fields are always there (libs/client/src/sent.ts): the service's order has them.
      const raw: Record<string, unknown> = { ...placed.data };
      for (const field of ORDER_FIELDS_ALWAYS_SENT) expect(raw[field]).toBeDefined();
      expect(placed.data).toMatchObject({ status: 'placed', petId, quantity: 1, complete: false });
      // Laika available again for the next run.
      await api.DELETE('/store/orders/{orderId}', { params: { path: { orderId: placed.data.id } } });
    },
  );

  it('rejects a call without a valid key with a typed error carrying the code, status and request id', async () => {
    const api = createPetstoreClient({ baseUrl: server.baseUrl, apiKey: 'psk_not-a-key' });
    const failure = await api.GET('/accounts/me').catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(PetstoreApiError);
    expect(failure).toMatchObject({ status: 401, code: 'unauthorized', requestId: expect.any(String) });
  });
});

/** The client's retry against the real service's budgets: it waits only where waiting can help. */
describe("the client's retries, against the built service's rate limits", () => {
  let server: ApiProcess;

  beforeAll(async () => {
    ensureBuilt();
    const databaseUrl = await testDatabaseUrl();
    server = await ApiProcess.start(
      {
        DATABASE_URL: databaseUrl,
        MESSAGE_WORKER: 'false',
        LOG_LEVEL: 'warn',
        RATE_LIMIT_PER_MINUTE: '4',
        AUTH_FAILURE_LIMIT_PER_MINUTE: '2',
      },
      { node: process.env['QUICKSTART_NODE'] || process.execPath },
    );
  });

  afterAll(async () => {
    expect(await server?.stop()).toBe(0);
  });

  it('gives up at once on a 429 too_many_auth_failures (a wrong key); waits for rate_limited', async () => {
    const waits: number[] = [];
    const api = createPetstoreClient({
      baseUrl: server.baseUrl,
      apiKey: 'psk_wrong',
      sleep: async (ms) => void waits.push(ms),
    });
    const codes = [];
    for (let i = 0; i < 3; i++) codes.push(await api.GET('/accounts/me').catch((e: PetstoreApiError) => e.code));
    expect(codes).toEqual(['unauthorized', 'unauthorized', 'too_many_auth_failures']);
    expect(waits).toEqual([]);

    // The address's own budget (4 a minute, spent by those 3 and the start-up's description fetch) is a plain
    // `rate_limited`: waiting does help there, and the client waits, within maxTotalRetryMs.
    const anonymous = createPetstoreClient({
      baseUrl: server.baseUrl,
      retries: 1,
      maxTotalRetryMs: 120_000,
      sleep: async (ms) => void waits.push(ms),
    });
    await expect(anonymous.GET('/accounts/me')).rejects.toMatchObject({ status: 429, code: 'rate_limited' });
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThanOrEqual(1000);
    expect(waits[0]).toBeLessThanOrEqual(60_000);

    // With no room left in maxTotalRetryMs, the same 429 is the error at once.
    const impatient = createPetstoreClient({
      baseUrl: server.baseUrl,
      maxTotalRetryMs: 0,
      sleep: async (ms) => void waits.push(ms),
    });
    await expect(impatient.GET('/accounts/me')).rejects.toMatchObject({ status: 429, code: 'rate_limited' });
    expect(waits).toHaveLength(1);
  });
});
