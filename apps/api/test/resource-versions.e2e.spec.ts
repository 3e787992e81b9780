import { StoreFixtures } from './support/store-fixtures';
import { ADMIN_KEY, TestApp } from './support/test-app';
import { eventually, WebhookReceiver } from './support/webhook-receiver';

// Deliveries wait for pg-boss's polling (0.5 s), messages for the worker.
jest.setTimeout(90_000);

const admin = { key: ADMIN_KEY };
const CATALOGUE = ['pet.created', 'pet.updated', 'pet.deleted', 'inventory.changed'];
const CATEGORIES = ['category.created', 'category.updated', 'category.deleted'];
const ORDERS = ['order.placed', 'order.completed', 'order.cancelled', 'message.delivered'];

interface Delivered {
  id: string;
  type: string;
  data: Record<string, unknown> & { version?: number };
  position?: string;
}

/**
 * Resource versions (issue 49, item 1), through HTTP on PostgreSQL: every change path advances the version of what it
 * changes, the API shows it, and each event's `data` carries the version after its change; a webhook delivery carries
 * it and the event's feed position. A write by plain SQL, as the previous release makes, advances it as well.
 */
describe('resource versions (HTTP, real PostgreSQL, worker on, a local receiver)', () => {
  let api: TestApp;
  let store: StoreFixtures;
  let receiver: WebhookReceiver;
  let customer: { key: string; id: number };
  let path = '';

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    api = await TestApp.start({ messaging: { worker: true }, webhooks: { allowPrivate: true } });
    store = await StoreFixtures.on(api);
    customer = await api.customer('Versions');
    path = `/versions-${customer.id}`;
    const events = [...CATALOGUE, ...CATEGORIES, ...ORDERS];
    const endpoint = await api.post('/webhooks/endpoints', {
      key: customer.key,
      body: { url: receiver.url + path, events },
    });
    expect(endpoint.status).toBe(201);
  });
  afterAll(async () => {
    await store?.close();
    await api?.close();
    await receiver?.close();
  });

  /** The deliveries so far of the resource `idOf` picks out, in the order they came. */
  const deliveriesOf = (types: string[], idOf: (data: Record<string, unknown>) => unknown, id: unknown) =>
    receiver
      .to(path)
      .filter((r) => types.includes(r.json.type) && idOf(r.json.data) === id)
      .map((r): Delivered => ({ id: r.headers['webhook-id'] as string, ...r.json }));

  /** Waits for the delivery of the event of that type about the resource whose data has that version. */
  const delivered = (type: string, idOf: (data: Record<string, unknown>) => unknown, id: unknown, version: number) =>
    eventually(
      () => deliveriesOf([type], idOf, id),
      (found) => found.some((d) => d.data.version === version),
      30_000,
    ).then((found) => found.find((d) => d.data.version === version) as Delivered);

  const byId = (data: Record<string, unknown>) => data['id'];
  const byPet = (data: Record<string, unknown>) => data['petId'];
  const pet = async (id: number) => (await api.get(`/pets/${id}`, { key: customer.key })).body;
  const entry = async (id: number) => (await api.get(`/store/inventory/${id}`, { key: customer.key })).body;

  it("a delivery carries the event's feed position and the resource's version, as the API shows them", async () => {
    const petId = await store.pet();
    const renamed = await api.patch(`/pets/${petId}`, { ...admin, body: { name: 'Carried' } });
    expect(renamed.body.version).toBe(2);
    const delivery = await delivered('pet.updated', byId, petId, 2);
    expect(delivery.data).toEqual(await pet(petId));
    // The position is the one GET /events?order=commit lists the event with (opaque, encrypted: 32 characters).
    expect(delivery.position).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const logged = await api.get(`/events/${delivery.id}`, { key: customer.key });
    expect(logged.body.position).toBe(delivery.position);
    const feed = await api.get(`/events?endingBefore=${encodeURIComponent(delivery.position as string)}&limit=1`, {
      key: customer.key,
    });
    expect(feed.status).toBe(200);
    const next = await api.get(`/events?startingAfter=${encodeURIComponent(feed.body[0].position)}&limit=100`, {
      key: customer.key,
    });
    expect(next.body.map((event: { id: string }) => event.id)).toContain(delivery.id);
  });

  it('a pet: one more for each PATCH that changes its name, category or status, none for a no-op', async () => {
    const petId = await store.pet({ quantity: 2 });
    const created = await pet(petId);
    expect(created.version).toBe(1);
    const other = await api.post('/categories', { ...admin, body: { name: `Versions ${Date.now()}` } });
    const steps = [
      { name: 'Renamed' },
      { categoryId: other.body.id },
      { status: 'pending' },
      { name: 'Renamed', status: 'pending' }, // nothing changes
      { status: 'available', name: 'Both' }, // one PATCH, one change
    ];
    const versions = [];
    for (const body of steps) versions.push((await api.patch(`/pets/${petId}`, { ...admin, body })).body.version);
    expect(versions).toEqual([2, 3, 4, 4, 5]);
    expect((await pet(petId)).version).toBe(5);
    // Each event's data is the pet as the PATCH answered it, its version included.
    const events = await eventually(
      () => deliveriesOf(['pet.updated'], byId, petId),
      (found) => found.length >= 4,
    );
    expect(events.map((d) => d.data.version).sort()).toEqual([2, 3, 4, 5]);
  });

  it("the stock entry: one more with every change of its count or of its pet's status, orders included", async () => {
    const petId = await store.pet(); // 1 unit: version 1
    expect((await entry(petId)).version).toBe(1);
    expect((await api.put(`/store/inventory/${petId}`, { ...admin, body: { quantity: 3 } })).body.version).toBe(2);
    expect((await api.put(`/store/inventory/${petId}`, { ...admin, body: { quantity: 3 } })).body.version).toBe(2);
    const first = await store.placed(customer.key, petId, 2); // 1 left
    expect(await entry(petId)).toMatchObject({ quantity: 1, status: 'available', version: 3 });
    await store.placed(customer.key, petId, 1); // the last unit: its count and its pet's status
    expect(await entry(petId)).toMatchObject({ quantity: 0, status: 'pending', version: 5 });
    expect((await api.delete(`/store/orders/${first}`, { key: customer.key })).status).toBe(204);
    expect(await entry(petId)).toMatchObject({ quantity: 2, status: 'available', version: 7 });
    // A status changed by hand alone changes the entry too (InventoryItem shows it).
    await api.patch(`/pets/${petId}`, { ...admin, body: { status: 'pending' } });
    expect(await entry(petId)).toMatchObject({ quantity: 2, status: 'pending', version: 8 });
    const last = await delivered('inventory.changed', byPet, petId, 8);
    expect(last.data).toEqual(await entry(petId));
  });

  it('an order: 1 placed, 2 cancelled or completed; its events carry each', async () => {
    const petId = await store.pet({ quantity: 5 });
    const cancelled = await store.placed(customer.key, petId);
    const completed = await store.placed(customer.key, petId);
    expect((await api.get(`/store/orders/${cancelled}`, { key: customer.key })).body.version).toBe(1);
    expect((await api.delete(`/store/orders/${cancelled}`, { key: customer.key })).status).toBe(204);
    const done = await api.patch(`/store/orders/${completed}`, { ...admin, body: { complete: true } });
    expect(done.body).toMatchObject({ status: 'completed', version: 2 });
    const read = await api.get(`/store/orders/${cancelled}`, { key: customer.key });
    expect(read.body).toMatchObject({ status: 'cancelled', version: 2 });
    expect((await delivered('order.placed', byId, cancelled, 1)).data.status).toBe('placed');
    expect((await delivered('order.cancelled', byId, cancelled, 2)).data).toEqual(read.body);
    expect((await delivered('order.completed', byId, completed, 2)).data).toEqual(done.body);
  });

  it('a category: one more with each rename or new description', async () => {
    const created = await api.post('/categories', { ...admin, body: { name: `Kind ${Date.now()}` } });
    expect(created.body.version).toBe(1);
    const id = created.body.id as number;
    const renamed = await api.patch(`/categories/${id}`, { ...admin, body: { name: `${created.body.name} II` } });
    expect(renamed.body.version).toBe(2);
    const same = await api.patch(`/categories/${id}`, { ...admin, body: { name: renamed.body.name } });
    expect(same.body.version).toBe(2);
    const described = await api.patch(`/categories/${id}`, { ...admin, body: { description: 'Kind' } });
    expect(described.body.version).toBe(3);
    expect((await delivered('category.updated', byId, id, 3)).data).toEqual(described.body);
  });

  it('a message: 1 queued, 2 delivered by the worker; its event carries the delivered one', async () => {
    const posted = await api.post('/messages', { key: customer.key, body: { message: 'versioned' } });
    expect(posted.body).toMatchObject({ status: 'queued', version: 1 });
    const read = await eventually(
      () => api.get(`/messages/${posted.body.id}`, { key: customer.key }),
      (r) => r.body.status === 'delivered',
      20_000,
    );
    expect(read.body.version).toBe(2);
    expect((await delivered('message.delivered', byId, posted.body.id, 2)).data).toEqual(read.body);
  });

  it('a write by plain SQL, as the previous release makes it, advances the version all the same', async () => {
    const petId = await store.pet();
    const categoryId = (await pet(petId)).categoryId as number;
    const orderId = await store.placed(customer.key, await store.pet({ quantity: 3 }));
    const before = {
      pet: (await pet(petId)).version,
      entry: (await entry(petId)).version,
      category: (await api.get(`/categories/${categoryId}`, admin)).body.version,
      order: (await api.get(`/store/orders/${orderId}`, admin)).body.version,
    };
    // The previous release's statements name their columns, and none of them is `version`.
    await api.sql(`UPDATE pets SET name = 'By SQL', status = 'pending' WHERE id = $1`, [petId]);
    await api.sql(`UPDATE categories SET description = 'By SQL' WHERE id = $1`, [categoryId]);
    await api.sql(`UPDATE orders SET status = 'completed', complete = true, status_changed_at = now() WHERE id = $1`, [
      orderId,
    ]);
    expect(await pet(petId)).toMatchObject({ name: 'By SQL', status: 'pending', version: before.pet + 1 });
    expect((await entry(petId)).version).toBe(before.entry + 1); // its pet's status
    expect((await api.get(`/categories/${categoryId}`, admin)).body.version).toBe(before.category + 1);
    expect((await api.get(`/store/orders/${orderId}`, admin)).body.version).toBe(before.order + 1);
    // The next change through the API goes on from there: its event is newer than anything sent before.
    const renamed = await api.patch(`/pets/${petId}`, { ...admin, body: { name: 'After SQL' } });
    expect(renamed.body.version).toBe(before.pet + 2);
    expect((await delivered('pet.updated', byId, petId, before.pet + 2)).data).toEqual(renamed.body);
  });
});
