import { createHash } from 'node:crypto';
import { StoreFixtures } from './support/store-fixtures';
import { TestApp, expectError } from './support/test-app';

describe('POST /store/orders with Idempotency-Key (HTTP, real PostgreSQL)', () => {
  let api: TestApp;
  let store: StoreFixtures;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    api = await TestApp.start();
    store = await StoreFixtures.on(api);
    alice = (await api.customer('Alice')).key;
    bob = (await api.customer('Bob')).key;
  });
  afterAll(async () => {
    await store.close();
    await api.close();
  });

  const withKey = (key: string) => ({ 'Idempotency-Key': key });
  const keptFor = async (key: string) =>
    api.sql(`SELECT account_id FROM idempotency_keys WHERE key_hash = $1`, [
      createHash('sha256').update(key, 'utf8').digest('hex'),
    ]);

  it('a replay returns the first status, body and Location + Idempotent-Replayed: true; orders no more', async () => {
    const petId = await store.pet({ quantity: 10 });
    const body = { petId, quantity: 3, shipDate: '2031-01-01T00:00:00.000Z' };
    const first = await store.order(alice, body, withKey('order-1'));
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();

    const again = await store.order(alice, { shipDate: body.shipDate, quantity: 3, petId }, withKey('order-1'));
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));

    expect(await store.stock(petId)).toEqual({ quantity: 7, status: 'available' });
    expect(await store.ordersOf(petId)).toEqual(expect.objectContaining({ open: 1, openUnits: 3 }));
  });

  it('a replay is the first response byte for byte (keys in the same order), with the same headers', async () => {
    const petId = await store.pet({ quantity: 5 });
    const body = { petId, quantity: 2, shipDate: '2031-02-03T04:05:06.000Z' };
    const first = await store.order(alice, body, withKey('bytes-1'));
    expect(first.status).toBe(201);
    const again = await store.order(alice, body, withKey('bytes-1'));
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(Object.keys(again.body)).toEqual(Object.keys(first.body));
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(again.headers.get('location')).toBe(`/store/orders/${first.body.id}`);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(await store.stock(petId)).toEqual({ quantity: 3, status: 'available' });
  });

  it('documents Idempotent-Replayed on the success of both idempotent operations', async () => {
    const document = (await api.get('/openapi.json')).body;
    expect(document.paths['/store/orders'].post.responses['201'].headers).toHaveProperty('Idempotent-Replayed');
    expect(document.paths['/messages'].post.responses['202'].headers).toHaveProperty('Idempotent-Replayed');
  });

  it('a replay still answers with the first response after the order changed', async () => {
    const petId = await store.pet({ quantity: 2 });
    const first = await store.order(alice, { petId, quantity: 1 }, withKey('order-2'));
    expect((await api.delete(`/store/orders/${first.body.id}`, { key: alice })).status).toBe(204);
    const again = await store.order(alice, { petId, quantity: 1 }, withKey('order-2'));
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(await store.stock(petId)).toEqual({ quantity: 2, status: 'available' });
  });

  it('the same key with another body is 422 idempotency_key_reused and orders nothing', async () => {
    const petId = await store.pet({ quantity: 10 });
    expect((await store.order(alice, { petId, quantity: 1 }, withKey('order-3'))).status).toBe(201);
    expectError(await store.order(alice, { petId, quantity: 2 }, withKey('order-3')), 422, 'idempotency_key_reused');
    expect(await store.stock(petId)).toEqual({ quantity: 9, status: 'available' });
  });

  it('validation runs first: an invalid body with a key is 400 and keeps nothing; the key then orders', async () => {
    const petId = await store.pet({ quantity: 10 });
    expectError(await store.order(alice, { petId, quantity: 0 }, withKey('order-invalid-1')), 400, 'validation_failed');
    expect(await keptFor('order-invalid-1')).toEqual([]);
    const valid = await store.order(alice, { petId, quantity: 2 }, withKey('order-invalid-1'));
    expect(valid.status).toBe(201);
    expect(valid.headers.get('idempotent-replayed')).toBeNull();
    expect(await keptFor('order-invalid-1')).toHaveLength(1);
    expect(await store.stock(petId)).toEqual({ quantity: 8, status: 'available' });
  });

  it('validation runs first: a used key with an invalid body is 400 (not 422); its result is kept', async () => {
    const petId = await store.pet({ quantity: 10 });
    const first = await store.order(alice, { petId, quantity: 1 }, withKey('order-invalid-2'));
    expect(first.status).toBe(201);
    expectError(await store.order(alice, { petId, quantity: 0 }, withKey('order-invalid-2')), 400, 'validation_failed');
    expectError(
      await store.order(alice, { petId, color: 'red' }, withKey('order-invalid-2')),
      400,
      'validation_failed',
    );
    const again = await store.order(alice, { petId, quantity: 1 }, withKey('order-invalid-2'));
    expect([again.status, again.headers.get('idempotent-replayed'), again.text]).toEqual([201, 'true', first.text]);
    expect(await store.stock(petId)).toEqual({ quantity: 9, status: 'available' });
  });

  it('keys belong to an account: another customer may use the same key for its own order', async () => {
    const petId = await store.pet({ quantity: 10 });
    const mine = await store.order(alice, { petId, quantity: 1 }, withKey('shared-key'));
    const theirs = await store.order(bob, { petId, quantity: 1 }, withKey('shared-key'));
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(await store.stock(petId)).toEqual({ quantity: 8, status: 'available' });
  });

  it('a refused order is not kept: the same key may be retried once the stock allows it', async () => {
    const petId = await store.pet({ quantity: 1 });
    expectError(await store.order(alice, { petId, quantity: 3 }, withKey('order-4')), 409, 'insufficient_stock');
    await store.setStock(petId, 5);
    const retry = await store.order(alice, { petId, quantity: 3 }, withKey('order-4'));
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(await store.stock(petId)).toEqual({ quantity: 2, status: 'available' });
  });

  it('refuses an empty or too long key (400) and orders nothing', async () => {
    const petId = await store.pet({ quantity: 3 });
    expectError(await store.order(alice, { petId, quantity: 1 }, withKey('k'.repeat(256))), 400, 'validation_failed');
    expectError(await store.order(alice, { petId, quantity: 1 }, withKey('')), 400, 'validation_failed');
    expect(await store.stock(petId)).toEqual({ quantity: 3, status: 'available' });
  });
});
