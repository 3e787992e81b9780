import { randomUUID } from 'node:crypto';
import { StoreFixtures } from './support/store-fixtures';
import { ADMIN_KEY, expectError, TestApp } from './support/test-app';

type Operation = { parameters?: { in: string; name: string }[]; 'x-idempotency-exempt'?: string };

const withKey = (key: string) => ({ 'Idempotency-Key': key });

/**
 * `Idempotency-Key` on PATCH and DELETE (issue 49 item 6): a write whose connection was cut can be settled by sending
 * it again with the same key, even when a plain repeat would be answered otherwise (a second cancel is a 409).
 */
describe('Idempotency-Key on PATCH and DELETE (HTTP, real PostgreSQL)', () => {
  let api: TestApp;
  let store: StoreFixtures;

  beforeAll(async () => {
    api = await TestApp.start();
    store = await StoreFixtures.on(api);
  });
  afterAll(async () => {
    await store.close();
    await api.close();
  });

  it('is described on every PATCH and DELETE', async () => {
    const document = (await api.get('/openapi.json')).body as { paths: Record<string, Record<string, Operation>> };
    const writes = Object.entries(document.paths).flatMap(([template, item]) =>
      (['patch', 'delete'] as const).flatMap((method) => (item[method] ? [{ where: `${method} ${template}` }] : [])),
    );
    expect(writes.length).toBeGreaterThanOrEqual(6);
    for (const [template, item] of Object.entries(document.paths)) {
      for (const method of ['patch', 'delete'] as const) {
        const operation = item[method];
        if (!operation) continue;
        const where = `${method} ${template}`;
        const header = (operation.parameters ?? []).some((p) => p.in === 'header' && p.name === 'Idempotency-Key');
        expect({ where, header }).toEqual({ where, header: true });
      }
    }
  });

  it('a repeated cancel with the same key replays its 204; without a key, 409; nothing is done twice', async () => {
    const { key: customer } = await api.customer('Cut connection');
    const petId = await store.pet({ quantity: 5 });
    const orderId = await store.placed(customer, petId, 2);
    const idempotencyKey = randomUUID();

    const first = await api.delete(`/store/orders/${orderId}`, { key: customer, headers: withKey(idempotencyKey) });
    expect(first.status).toBe(204);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect((await store.stock(petId)).quantity).toBe(5);

    const again = await api.delete(`/store/orders/${orderId}`, { key: customer, headers: withKey(idempotencyKey) });
    expect(again.status).toBe(204);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await store.stock(petId)).quantity).toBe(5); // the units went back once

    expectError(await api.delete(`/store/orders/${orderId}`, { key: customer }), 409, 'order_already_cancelled');
  });

  it('a PATCH replays its first answer, bytes and all, after the resource changed again', async () => {
    const created = await api.post('/categories', { key: ADMIN_KEY, body: { name: `Replayed ${randomUUID()}` } });
    const id = created.body.id as number;
    const idempotencyKey = randomUUID();
    const rename = { name: `Renamed ${randomUUID()}` };
    const first = await api.patch(`/categories/${id}`, {
      key: ADMIN_KEY,
      body: rename,
      headers: withKey(idempotencyKey),
    });
    expect(first.status).toBe(200);
    const other = await api.patch(`/categories/${id}`, { key: ADMIN_KEY, body: { name: `Other ${randomUUID()}` } });
    expect(other.status).toBe(200);

    const replay = await api.patch(`/categories/${id}`, {
      key: ADMIN_KEY,
      body: rename,
      headers: withKey(idempotencyKey),
    });
    expect(replay.status).toBe(200);
    expect(replay.text).toBe(first.text);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    // The replay changed nothing: the later name stays.
    expect((await api.get(`/categories/${id}`, { key: ADMIN_KEY })).body.name).toBe(other.body.name);

    // The same key with another request is refused.
    const reused = await api.patch(`/categories/${id}`, {
      key: ADMIN_KEY,
      body: { name: 'Something else' },
      headers: withKey(idempotencyKey),
    });
    expectError(reused, 422, 'idempotency_key_reused');
  });

  it('two concurrent cancels with one key: the order is cancelled once, and neither answer is a 5xx', async () => {
    const { key: customer } = await api.customer('Twice at once');
    const petId = await store.pet({ quantity: 3 });
    const orderId = await store.placed(customer, petId, 1);
    const idempotencyKey = randomUUID();
    const answers = await Promise.all(
      [1, 2].map(() => api.delete(`/store/orders/${orderId}`, { key: customer, headers: withKey(idempotencyKey) })),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    // Both replay the one cancel, or the second arrives while the first runs (409 idempotency_key_in_use).
    expect([
      [204, 204],
      [204, 409],
    ]).toContainEqual(statuses);
    for (const answer of answers) if (answer.status === 409) expectError(answer, 409, 'idempotency_key_in_use');
    expect((await store.stock(petId)).quantity).toBe(3);
  });
});
