import { randomUUID } from 'node:crypto';
import { createPetstoreClient, PetstoreApiError, unwrap } from '@petstore/client';
import { resetDatabase, testDatabaseUrl } from '@petstore/testing';
import { ApiProcess, ensureBuilt } from './support/built-app';

// Building (when run without CI's build first), starting the process and the delivery take a while.
jest.setTimeout(240_000);

const ADMIN_KEY = `quickstart-admin-${randomUUID()}`;

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

  it('signs up, lists pets, places an order, sends a message and sees it delivered', async () => {
    const baseUrl = server.baseUrl;
    const deadline = Date.now() + 60_000;

    // --- the README's quickstart ---
    const { apiKey } = await unwrap(createPetstoreClient({ baseUrl }).POST('/accounts', { body: { name: 'Ada' } }));
    const api = createPetstoreClient({ baseUrl, apiKey: apiKey.key });

    const pets = [];
    for await (const pet of api.list('/pets', { status: ['available'], limit: 2 })) pets.push(pet);

    const order = await unwrap(api.POST('/store/orders', { body: { petId: pets[0].id, quantity: 1 } }));

    let message = await unwrap(api.POST('/messages', { body: { message: 'Hello, Petstore!' } }));
    while (message.status === 'queued') {
      if (Date.now() > deadline) throw new Error(`message ${message.id} not delivered within 60 s:\n${server.log}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
      message = await unwrap(api.GET('/messages/{messageId}', { params: { path: { messageId: message.id } } }));
    }
    // --- end of the quickstart ---

    expect(apiKey.key).toMatch(/^psk_/);
    // Three pets, two per page: the iterator followed Link: rel="next".
    expect(pets.map((p) => p.name)).toEqual(['Rex', 'Fido', 'Laika']);
    expect(order).toEqual(expect.objectContaining({ petId: pets[0].id, quantity: 1, complete: false }));
    expect(message).toEqual(
      expect.objectContaining({ message: 'Hello, Petstore!', status: 'delivered', deliveredAt: expect.any(String) }),
    );
  });

  it('rejects a call without a valid key with a typed error carrying the code, status and request id', async () => {
    const api = createPetstoreClient({ baseUrl: server.baseUrl, apiKey: 'psk_not-a-key' });
    const failure = await api.GET('/accounts/me').catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(PetstoreApiError);
    expect(failure).toMatchObject({ status: 401, code: 'unauthorized', requestId: expect.any(String) });
  });
});
