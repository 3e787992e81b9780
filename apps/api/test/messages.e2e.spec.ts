import { loadConfig, withConfig } from '../src/config/app-config';
import { createWorker } from '../src/assembly/assembly';
import { ADMIN_KEY, TestApp, TestResponse, expectError } from './support/test-app';
import { eventually } from './support/eventually';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface MessageJson {
  id: string;
  message: string;
  status: 'queued' | 'delivered' | 'failed';
  createdAt: string;
  deliveredAt?: string;
}

/** The path of `Link: <…>; rel="next"`, or null on the last page. */
function nextLink(response: TestResponse): string | null {
  const link = response.headers.get('link');
  const match = link ? /^<([^>]+)>; rel="next"$/.exec(link) : null;
  if (link && !match) throw new Error(`Malformed Link header: ${link}`);
  return match ? match[1] : null;
}

/** Every page of a list, following `Link: rel="next"`. */
async function walk(api: TestApp, first: string, key = ADMIN_KEY): Promise<{ items: MessageJson[]; pages: number }> {
  const items: MessageJson[] = [];
  let pages = 0;
  let next: string | null = first;
  while (next) {
    const page: TestResponse = await api.get(next, { key });
    expect(page.status).toBe(200);
    items.push(...page.body);
    next = nextLink(page);
    pages++;
  }
  return { items, pages };
}

describe('POST /messages, the quickstart operation (HTTP, real PostgreSQL, worker off)', () => {
  let api: TestApp;
  let customer: string;

  beforeAll(async () => {
    api = await TestApp.start();
    customer = (await api.customer('Quick Starter')).key;
  });
  afterAll(() => api.close());

  const inbox = async () => (await walk(api, '/messages?limit=100')).items;
  const send = (body: unknown, key: string | null = customer) => api.post('/messages', { key, body });

  it('answers as the getting-started guide shows it: 202 {id, message, status: "queued", createdAt…}', async () => {
    const before = Date.now();
    const response = await api.request('POST', '/messages', {
      headers: { Authorization: `Bearer ${customer}`, 'Content-Type': 'application/json' },
      raw: JSON.stringify({ message: 'Hello from the quickstart!' }),
    });
    expect(response.status).toBe(202);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(response.body).sort()).toEqual(['createdAt', 'id', 'message', 'status', 'version']);
    expect(response.body).toEqual({
      id: expect.stringMatching(UUID),
      message: 'Hello from the quickstart!',
      status: 'queued',
      createdAt: expect.stringMatching(ISO_UTC),
      version: 1,
    });
    const createdAt = Date.parse(response.body.createdAt);
    expect(createdAt).toBeGreaterThanOrEqual(before - 1_000);
    expect(createdAt).toBeLessThanOrEqual(Date.now() + 1_000);
    expect(response.headers.get('location')).toBe(`/messages/${response.body.id}`);

    // It was queued, not only answered: the sender reads it back, still queued (no worker here).
    const read = await api.get(`/messages/${response.body.id}`, { key: customer });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(response.body);
  });

  it('gives every message its own id', async () => {
    const responses = await Promise.all(Array.from({ length: 5 }, (_, i) => send({ message: `parallel ${i}` })));
    expect(responses.map((r) => r.status)).toEqual([202, 202, 202, 202, 202]);
    expect(new Set(responses.map((r) => r.body.id)).size).toBe(5);
  });

  it('keeps the text as sent: 1 character, 2,000 characters, surrounding spaces, non-ASCII', async () => {
    for (const text of ['x', 'm'.repeat(2_000), '  spaced  ', 'Grüße, 猫 🐈']) {
      const response = await send({ message: text });
      expect(response.status).toBe(202);
      expect(response.body.message).toBe(text);
      expect((await api.get(`/messages/${response.body.id}`, { key: customer })).body.message).toBe(text);
    }
  });

  it('counts the length in UTF-16 code units: 1,000 emoji fit, 1,001 do not', async () => {
    const fits = await send({ message: '🐈'.repeat(1_000) });
    expect(fits.status).toBe(202);
    expect(fits.body.message).toBe('🐈'.repeat(1_000));
    const tooLong = await send({ message: '🐈'.repeat(1_001) });
    expectError(tooLong, 400, 'validation_failed');
    expect(tooLong.body.details).toEqual([{ field: 'message', message: expect.stringContaining('2000') }]);
  });

  it.each([
    ['no message', {}],
    ['an empty message', { message: '' }],
    ['a 2,001-character message', { message: 'm'.repeat(2_001) }],
    ['a numeric message', { message: 42 }],
    ['a null message', { message: null }],
    ['a boolean message', { message: true }],
    ['an array message', { message: ['hi'] }],
    ['an object message', { message: { text: 'hi' } }],
    ['an unknown field', { message: 'hi', priority: 'high' }],
    ['an array body', [{ message: 'hi' }]],
    ['a string body', 'hi'],
    ['a null body', null],
  ])('refuses %s (400 validation_failed) and queues nothing', async (_, body) => {
    const before = await inbox();
    const response = await send(body);
    expectError(response, 400, 'validation_failed');
    expect(await inbox()).toEqual(before);
  });

  it('names the field in details', async () => {
    const response = await send({});
    expect(response.body.details).toContainEqual({ field: 'message', message: 'message must be a string' });
    expect(response.body.details.every((d: { field: string }) => d.field === 'message')).toBe(true);
  });

  it('refuses a body without Content-Type (400 missing_content_type), or with another one', async () => {
    const raw = JSON.stringify({ message: 'hi' });
    expectError(await api.post('/messages', { key: customer, raw }), 400, 'missing_content_type');
    expectError(
      await api.post('/messages', { key: customer, raw, headers: { 'content-type': 'text/plain' } }),
      400,
      'missing_content_type',
    );
  });

  it.each([
    ['truncated JSON', '{"message": "hi"'],
    ['a single-quoted string', "{'message': 'hi'}"],
    ['trailing garbage', '{"message": "hi"} x'],
  ])('refuses %s (400 invalid_json)', async (_, raw) => {
    const response = await api.post('/messages', {
      key: customer,
      raw,
      headers: { 'content-type': 'application/json' },
    });
    expectError(response, 400, 'invalid_json');
  });

  it('refuses a missing, unknown or non-Bearer key (401) with WWW-Authenticate, and queues nothing', async () => {
    const before = await inbox();
    const body = { message: 'hi' };
    const responses = [
      await send(body, null),
      await send(body, 'psk_not-a-key-at-all-0123456789abcdefghij'),
      await api.post('/messages', {
        body,
        headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
      }),
      await api.post('/messages', { body, headers: { authorization: `Token ${customer}` } }),
      await api.post('/messages', { body, headers: { authorization: 'Bearer' } }),
    ];
    for (const response of responses) {
      expectError(response, 401, 'unauthorized');
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="petstore"');
    }
    expect(await inbox()).toEqual(before);
  });

  it('is described in the OpenAPI document as beta, answering 202 with the Message schema', async () => {
    const document = (await api.get('/openapi.json')).body;
    const post = document.paths['/messages'].post;
    expect(post['x-stability']).toBe('beta');
    expect(post.responses['202'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Message' });
    expect(post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/NewMessage' });
    expect(document.paths['/messages'].get['x-stability']).toBe('beta');
    expect(document.paths['/messages/{messageId}'].get['x-stability']).toBe('beta');
    expect(document.components.schemas.NewMessage.required).toEqual(['message']);
    expect(document.components.schemas.Message.required.sort()).toEqual(['createdAt', 'id', 'message', 'status']);
  });
});

describe('POST /messages with Idempotency-Key (HTTP, real PostgreSQL)', () => {
  let api: TestApp;
  let customer: string;
  let other: string;

  beforeAll(async () => {
    api = await TestApp.start();
    customer = (await api.customer('Retrier')).key;
    other = (await api.customer('Other')).key;
  });
  afterAll(() => api.close());

  const post = (key: string, idempotencyKey: string, body: unknown) =>
    api.post('/messages', { key, body, headers: { 'Idempotency-Key': idempotencyKey } });
  const count = async () => (await walk(api, '/messages?limit=100')).items.length;

  it('replays the first response for the same key and body, queueing the message once', async () => {
    const before = await count();
    const first = await post(customer, 'quickstart-1', { message: 'only once' });
    expect(first.status).toBe(202);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await post(customer, 'quickstart-1', { message: 'only once' });
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('location')).toBe(`/messages/${first.body.id}`);
    expect(await count()).toBe(before + 1);
  });

  it('replays the first response byte for byte (keys in the same order), with the same headers', async () => {
    const first = await post(customer, 'bytes-1', { message: 'the same bytes' });
    expect(first.status).toBe(202);
    const again = await post(customer, 'bytes-1', { message: 'the same bytes' });
    expect(again.status).toBe(202);
    expect(again.text).toBe(first.text);
    expect(Object.keys(again.body)).toEqual(Object.keys(first.body));
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
  });

  it('gives one message to concurrent retries with the same key (the others are replays or 409 in use)', async () => {
    const before = await count();
    const responses = await Promise.all(
      Array.from({ length: 5 }, () => post(customer, 'racing-key', { message: 'raced' })),
    );
    for (const response of responses) {
      if (response.status !== 202) expectError(response, 409, 'idempotency_key_in_use');
    }
    const accepted = responses.filter((r) => r.status === 202);
    expect(accepted.length).toBeGreaterThanOrEqual(1);
    expect(new Set(accepted.map((r) => r.body.id)).size).toBe(1);
    expect(await count()).toBe(before + 1);
  });

  it('refuses the same key with another body (422 idempotency_key_reused) and queues nothing', async () => {
    await post(customer, 'quickstart-2', { message: 'first' });
    const before = await count();
    expectError(await post(customer, 'quickstart-2', { message: 'second' }), 422, 'idempotency_key_reused');
    expect(await count()).toBe(before);
  });

  it("scopes keys to the account: another customer's same key queues its own message", async () => {
    const mine = await post(customer, 'shared-key', { message: 'same text' });
    const theirs = await post(other, 'shared-key', { message: 'same text' });
    expect(theirs.status).toBe(202);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.id).not.toBe(mine.body.id);
  });

  it('keeps no key for a refused request: the same key then works with a valid body', async () => {
    expectError(await post(customer, 'after-400', { message: '' }), 400, 'validation_failed');
    expect((await post(customer, 'after-400', { message: 'now valid' })).status).toBe(202);
  });

  it('refuses a key longer than 255 characters (400)', async () => {
    expectError(await post(customer, 'k'.repeat(256), { message: 'x' }), 400, 'validation_failed');
  });

  it('documents Idempotency-Key and its 409/422 on the operation', async () => {
    const operation = (await api.get('/openapi.json')).body.paths['/messages'].post;
    expect(operation.parameters).toContainEqual(
      expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false }),
    );
    expect(Object.keys(operation.responses)).toEqual(
      expect.arrayContaining(['202', '400', '401', '409', '413', '422', '429', '500', '503']),
    );
  });
});

describe('GET /messages/{messageId} (HTTP, real PostgreSQL)', () => {
  let api: TestApp;
  let alice: string;
  let bob: string;
  let message: { id: string };

  beforeAll(async () => {
    api = await TestApp.start();
    alice = (await api.customer('Alice')).key;
    bob = (await api.customer('Bob')).key;
    message = (await api.post('/messages', { key: alice, body: { message: 'for the store' } })).body;
  });
  afterAll(() => api.close());

  it('shows the sender its message', async () => {
    const read = await api.get(`/messages/${message.id}`, { key: alice });
    expect(read.status).toBe(200);
    expect(read.body).toEqual({
      id: message.id,
      message: 'for the store',
      status: 'queued',
      createdAt: expect.stringMatching(ISO_UTC),
      version: 1,
    });
  });

  it('answers 404 to another customer, as if it did not exist (not 403)', async () => {
    const response = await api.get(`/messages/${message.id}`, { key: bob });
    expectError(response, 404, 'not_found');
    const missing = await api.get('/messages/00000000-0000-4000-8000-000000000000', { key: bob });
    expect(response.body.message.replace(message.id, 'ID')).toBe(
      missing.body.message.replace('00000000-0000-4000-8000-000000000000', 'ID'),
    );
  });

  it('shows a message given up after its last attempt as failed, without deliveredAt', async () => {
    const given = (await api.post('/messages', { key: alice, body: { message: 'undeliverable' } })).body;
    // What the worker records when MESSAGE_MAX_ATTEMPTS attempts have failed (messages-delivery spec).
    await api.sql(`UPDATE messages SET status = 'failed', attempts = 10, last_error = 'refused' WHERE id = $1`, [
      given.id,
    ]);
    const read = await api.get(`/messages/${given.id}`, { key: alice });
    // Changed by plain SQL: the version counts it all the same (the database keeps it).
    expect(read.body).toEqual({ ...given, status: 'failed', version: 2 });
    const listed = await api.get('/messages?status=failed', { key: ADMIN_KEY });
    expect(listed.body.map((m: MessageJson) => m.id)).toEqual([given.id]);
    const schema = (await api.get('/openapi.json')).body.components.schemas.MessageStatus;
    expect(schema.enum).toEqual(['queued', 'delivered', 'failed']);
  });

  it('shows an administrator any message', async () => {
    const read = await api.get(`/messages/${message.id}`, { key: ADMIN_KEY });
    expect(read.status).toBe(200);
    expect(read.body.id).toBe(message.id);
  });

  it('accepts the id in upper case', async () => {
    const read = await api.get(`/messages/${message.id.toUpperCase()}`, { key: alice });
    expect(read.status).toBe(200);
    expect(read.body.id).toBe(message.id);
  });

  it('answers 404 for a UUID no message has', async () => {
    expectError(await api.get('/messages/3f2b8c1e-9d4a-4b7e-8c2d-1a2b3c4d5e6f', { key: ADMIN_KEY }), 404, 'not_found');
  });

  it.each([
    '123',
    'not-a-uuid',
    '3f2b8c1e9d4a4b7e8c2d1a2b3c4d5e6f',
    '3f2b8c1e-9d4a-4b7e-8c2d-1a2b3c4d5e6',
    "x' OR '1'='1",
    '%7B3f2b8c1e-9d4a-4b7e-8c2d-1a2b3c4d5e6f%7D',
  ])('refuses the messageId %p (400 validation_failed)', async (id) => {
    const response = await api.get(`/messages/${id}`, { key: alice });
    expectError(response, 400, 'validation_failed');
    expect(response.body.details).toEqual([{ field: 'messageId', message: 'messageId must be a UUID' }]);
  });

  it('needs a key (401)', async () => {
    expectError(await api.get(`/messages/${message.id}`), 401, 'unauthorized');
  });
});

describe('GET /messages, the store inbox (HTTP, real PostgreSQL)', () => {
  let api: TestApp;
  let customer: string;
  const delivered: string[] = [];
  const queued: string[] = [];

  beforeAll(async () => {
    api = await TestApp.start();
    customer = (await api.customer()).key;
    // Four messages delivered by an instance with the worker on, then three left queued.
    for (let i = 1; i <= 4; i++)
      delivered.push((await api.post('/messages', { key: customer, body: { message: `early ${i}` } })).body.id);
    const worker = await TestApp.startOn(api.databaseUrl, { messaging: { worker: true } });
    try {
      await eventually(
        () => worker.get('/messages?status=delivered&limit=100', { key: ADMIN_KEY }),
        (r) => r.body.length === 4,
      );
    } finally {
      await worker.close();
    }
    for (let i = 1; i <= 3; i++)
      queued.push((await api.post('/messages', { key: customer, body: { message: `late ${i}` } })).body.id);
  });
  afterAll(() => api.close());

  it('lists every message oldest first, 3 at a time, each exactly once', async () => {
    const { items, pages } = await walk(api, '/messages?limit=3');
    expect(pages).toBe(3);
    expect(items.map((m) => m.id)).toEqual([...delivered, ...queued]);
    for (const item of items)
      expect(
        Object.keys(item).every((k) => ['id', 'message', 'status', 'createdAt', 'deliveredAt', 'version'].includes(k)),
      ).toBe(true);
  });

  it('filters by status, keeping the filter in the next link', async () => {
    const deliveredOnes = await walk(api, '/messages?status=delivered&limit=3');
    expect(deliveredOnes.pages).toBe(2);
    expect(deliveredOnes.items.map((m) => m.id)).toEqual(delivered);
    for (const m of deliveredOnes.items) {
      expect(m).toEqual({
        id: expect.any(String),
        message: expect.any(String),
        status: 'delivered',
        createdAt: expect.stringMatching(ISO_UTC),
        deliveredAt: expect.stringMatching(ISO_UTC),
        version: 2,
      });
      expect(Date.parse(m.deliveredAt ?? '')).toBeGreaterThanOrEqual(Date.parse(m.createdAt));
    }
    const queuedOnes = await walk(api, '/messages?status=queued&limit=2');
    expect(queuedOnes.items.map((m) => m.id)).toEqual(queued);
    expect(queuedOnes.items.every((m) => m.status === 'queued' && !('deliveredAt' in m))).toBe(true);
  });

  it('is stable under inserts: a message queued meanwhile comes last, none repeats', async () => {
    const first = await api.get('/messages?limit=4', { key: ADMIN_KEY });
    const added = (await api.post('/messages', { key: customer, body: { message: 'meanwhile' } })).body.id;
    const rest = await walk(api, nextLink(first) ?? 'no next page');
    expect([...first.body.map((m: { id: string }) => m.id), ...rest.items.map((m) => m.id)]).toEqual([
      ...delivered,
      ...queued,
      added,
    ]);
  });

  it('defaults to 20 items without a Link when they all fit', async () => {
    const page = await api.get('/messages', { key: ADMIN_KEY });
    expect(page.body.length).toBeGreaterThanOrEqual(7);
    expect(page.headers.get('link')).toBeNull();
  });

  it.each([
    'status=sent',
    'status=QUEUED',
    'status=',
    'status=queued&status=delivered',
    'limit=0',
    'limit=101',
    'limit=x',
    'cursor=bogus',
    'owner=1',
  ])('refuses %s (400 validation_failed)', async (query) => {
    expectError(await api.get(`/messages?${query}`, { key: ADMIN_KEY }), 400, 'validation_failed');
  });

  it('is for administrators only (403 for a customer, 401 without a key)', async () => {
    expectError(await api.get('/messages', { key: customer }), 403, 'forbidden');
    expectError(await api.get('/messages'), 401, 'unauthorized');
  });
});

describe('message delivery by the worker (HTTP, real PostgreSQL)', () => {
  it('moves a posted message to delivered within seconds', async () => {
    const api = await TestApp.start({ messaging: { worker: true } });
    try {
      const customer = (await api.customer()).key;
      const posted = await api.post('/messages', { key: customer, body: { message: 'deliver me' } });
      expect(posted.status).toBe(202);
      expect(posted.body.status).toBe('queued');
      const read = await eventually(
        () => api.get(`/messages/${posted.body.id}`, { key: customer }),
        (r) => r.body.status === 'delivered',
        5_000,
      );
      const delivered = { status: 'delivered', deliveredAt: expect.stringMatching(ISO_UTC), version: 2 };
      expect(read.body).toEqual({ ...posted.body, ...delivered });
      expect(Date.parse(read.body.deliveredAt)).toBeGreaterThanOrEqual(Date.parse(posted.body.createdAt));
    } finally {
      await api.close();
    }
  });

  it('loses no message when the process stops between queueing and delivery: the next start delivers it', async () => {
    const first = await TestApp.start({ messaging: { worker: false } });
    const customer = (await first.customer()).key;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await first.post('/messages', { key: customer, body: { message: `survivor ${i}` } })).body.id);
    for (const id of ids) expect((await first.get(`/messages/${id}`, { key: customer })).body.status).toBe('queued');
    await first.close();

    const second = await TestApp.startOn(first.databaseUrl, { messaging: { worker: true } });
    try {
      for (const id of ids) {
        const read = await eventually(
          () => second.get(`/messages/${id}`, { key: customer }),
          (r) => r.body.status === 'delivered',
        );
        expect(read.body.deliveredAt).toMatch(ISO_UTC);
      }
    } finally {
      await second.close();
    }
  });

  it('runs alone in a worker-only process (no HTTP) beside an API without a worker', async () => {
    const api = await TestApp.start({ messaging: { worker: false } });
    const worker = await createWorker({
      config: withConfig(loadConfig({}), { messaging: { worker: false } }),
      databaseUrl: api.databaseUrl,
      logger: false,
    });
    try {
      const customer = (await api.customer()).key;
      const posted = await api.post('/messages', { key: customer, body: { message: 'for the worker process' } });
      const read = await eventually(
        () => api.get(`/messages/${posted.body.id}`, { key: customer }),
        (r) => r.body.status === 'delivered',
      );
      expect(read.body.deliveredAt).toMatch(ISO_UTC);
    } finally {
      await worker.close();
      await api.close();
    }
  });

  it('delivers every message when two instances run workers on one database', async () => {
    const one = await TestApp.start({ messaging: { worker: true } });
    const two = await TestApp.startOn(one.databaseUrl, { messaging: { worker: true } });
    try {
      const customer = (await one.customer()).key;
      const posted = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          (i % 2 ? one : two).post('/messages', { key: customer, body: { message: `m${i}` } }),
        ),
      );
      expect(posted.every((r) => r.status === 202)).toBe(true);
      const all = await eventually(
        () => walk(one, '/messages?limit=100'),
        ({ items }) => items.length === 40 && items.every((m) => m.status === 'delivered'),
      );
      expect(new Set(all.items.map((m) => m.id))).toEqual(new Set(posted.map((r) => r.body.id)));
    } finally {
      await two.close();
      await one.close();
    }
  });
});
