import { Webhook } from 'standardwebhooks';
import { StoreFixtures } from './support/store-fixtures';
import { ADMIN_KEY, TestApp, expectError } from './support/test-app';
import { eventually, WebhookReceiver } from './support/webhook-receiver';

// Deliveries wait for pg-boss's polling (0.5 s).
jest.setTimeout(60_000);

const admin = { key: ADMIN_KEY };
const CATALOGUE_EVENTS = [
  'pet.created',
  'pet.updated',
  'pet.deleted',
  'category.created',
  'category.updated',
  'category.deleted',
  'inventory.changed',
];
const PET_EVENTS = ['pet.created', 'pet.updated', 'pet.deleted', 'inventory.changed'];

interface LoggedEvent {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
  /** Its place in the commit-order feed, once settled. */
  position?: string;
}

/**
 * A storefront follows the catalogue as a customer: the catalogue's events (a pet created, renamed, restocked,
 * deleted; a category's changes) are in its `GET /events` and reach its webhook endpoint, as the administrator's
 * changes commit.
 */
/** An event of the log as a webhook body carries it: without its feed position (the log's alone). */
function withoutPosition<T extends { position?: string }>(event: T): Omit<T, 'position'> {
  const copy = { ...event };
  delete copy.position;
  return copy;
}

describe('catalogue events for storefronts (HTTP, real PostgreSQL, worker on, a local receiver)', () => {
  let api: TestApp;
  let store: StoreFixtures;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    api = await TestApp.start({ messaging: { worker: true }, webhooks: { allowPrivate: true } });
    store = await StoreFixtures.on(api);
  });
  afterAll(async () => {
    await store?.close();
    await api?.close();
    await receiver?.close();
  });

  /**
   * The customer's events of these types about this pet (or category), oldest first by transaction (the events one
   * transaction records are in no fixed order among themselves: compare those as sets).
   */
  async function eventsOf(key: string, types: string[], id: number): Promise<LoggedEvent[]> {
    const response = await api.get(`/events?type=${types.join(',')}&limit=100`, { key });
    expect(response.status).toBe(200);
    return (response.body as LoggedEvent[])
      .filter((event) => (event.data['id'] ?? event.data['petId']) === id)
      .reverse();
  }

  it('a storefront (customer key) sees a pet renamed and restocked in GET /events and by webhook', async () => {
    const { key } = await api.customer('Storefront');
    const path = '/storefront';
    const created = await api.post('/webhooks/endpoints', {
      key,
      body: { url: receiver.url + path, events: ['pet.updated', 'inventory.changed'] },
    });
    expect(created.status).toBe(201);
    const secret = created.body.secret as string;

    const petId = await store.pet({ quantity: 2 });
    const before = new Set((await eventsOf(key, ['pet.updated', 'inventory.changed'], petId)).map((e) => e.id));
    const renamed = await api.patch(`/pets/${petId}`, { ...admin, body: { name: 'Renamed by the store' } });
    expect(renamed.status).toBe(200);
    const restocked = await api.put(`/store/inventory/${petId}`, { ...admin, body: { quantity: 12 } });
    expect(restocked.status).toBe(200);

    // In the log, as the customer reads it: the pet as GET /pets?ids= shows it, the stock entry as the PUT answered.
    const [current] = (await api.get(`/pets?ids=${petId}`, { key })).body;
    const logged = (await eventsOf(key, ['pet.updated', 'inventory.changed'], petId)).filter((e) => !before.has(e.id));
    expect(logged.map(({ type, data }) => ({ type, data }))).toEqual([
      { type: 'pet.updated', data: current },
      // Made with 1 unit, set to 2 by the fixture, then to 12: the third version of the entry.
      { type: 'inventory.changed', data: { petId, quantity: 12, status: 'available', version: 3 } },
    ]);
    expect(restocked.body).toEqual(logged[1].data);
    for (const event of logged) {
      // The same event by id (its feed position too, once settled: it may have settled since the list).
      const byId = (await api.get(`/events/${event.id}`, { key })).body;
      expect(withoutPosition(byId)).toEqual(withoutPosition(event));
      if (event.position !== undefined) expect(byId.position).toBe(event.position);
    }

    // Through the webhook: the same two events, signed, with the log's ids.
    const ids = new Set(logged.map((event) => event.id));
    const deliveries = await eventually(
      () => receiver.to(path).filter((delivery) => ids.has(delivery.headers['webhook-id'] as string)),
      (received) => received.length >= 2,
    );
    const verifier = new Webhook(secret);
    const delivered = deliveries.map((delivery) => {
      verifier.verify(delivery.body, delivery.headers as Record<string, string>);
      return { id: delivery.headers['webhook-id'] as string, ...delivery.json };
    });
    expect(delivered.map(withoutPosition).sort((a, b) => a.type.localeCompare(b.type))).toEqual(
      logged.map(withoutPosition).sort((a, b) => a.type.localeCompare(b.type)),
    );
    // Each delivery carries the event's feed position: the one the log lists the event with (settled by then).
    for (const delivery of delivered) {
      expect(delivery.position).toEqual(expect.any(String));
      expect((await api.get(`/events/${delivery.id}`, { key })).body.position).toBe(delivery.position);
    }
  });

  it("every customer sees the catalogue's events, but not pet.status_changed (administrators only)", async () => {
    const { key } = await api.customer('Another storefront');
    const petId = await store.pet({ quantity: 1 });
    expect((await api.patch(`/pets/${petId}`, { ...admin, body: { status: 'sold' } })).status).toBe(200);
    // Created with 1 unit (the stock set to 1 again changes nothing), then sold by hand.
    const types = (await eventsOf(key, [...PET_EVENTS, 'pet.status_changed'], petId)).map((e) => e.type).sort();
    expect(types).toEqual(['inventory.changed', 'inventory.changed', 'pet.created', 'pet.updated']);
    const everything = (await eventsOf(ADMIN_KEY, [...PET_EVENTS, 'pet.status_changed'], petId)).map((e) => e.type);
    expect(everything).toContain('pet.status_changed');
    expect(everything.filter((type) => type !== 'pet.status_changed').sort()).toEqual(types);
    // A customer still may not subscribe to pet.status_changed; to the catalogue's events it may.
    const url = `${receiver.url}/refused`;
    const refused = await api.post('/webhooks/endpoints', { key, body: { url, events: ['pet.status_changed'] } });
    expectError(refused, 400, 'validation_failed');
    const allowed = await api.post('/webhooks/endpoints', { key, body: { url, events: CATALOGUE_EVENTS } });
    expect(allowed.status).toBe(201);
  });

  it('an update that changes nothing records no event; a deletion records pet.deleted', async () => {
    const { key } = await api.customer('Watching no-ops');
    const petId = await store.pet();
    const [pet] = (await api.get(`/pets?ids=${petId}`, { key })).body;
    const same = await api.patch(`/pets/${petId}`, { ...admin, body: { name: pet.name, status: pet.status } });
    expect(same.status).toBe(200);
    const quantity = (await api.get(`/store/inventory/${petId}`, admin)).body.quantity;
    expect((await api.put(`/store/inventory/${petId}`, { ...admin, body: { quantity } })).status).toBe(200);
    expect((await eventsOf(key, PET_EVENTS, petId)).map((e) => e.type).sort()).toEqual([
      'inventory.changed',
      'pet.created',
    ]);
    expect((await api.delete(`/pets/${petId}`, admin)).status).toBe(204);
    const [deleted] = await eventsOf(key, ['pet.deleted'], petId);
    expect(deleted.data).toEqual(pet);
  });

  it("a category's creation, change and deletion, and none for an update that changes nothing", async () => {
    const { key } = await api.customer('Watching categories');
    const created = await api.post('/categories', { ...admin, body: { name: `Storefront ${Date.now()}` } });
    expect(created.status).toBe(201);
    const id = created.body.id as number;
    const path = `/categories/${id}`;
    expect((await api.patch(path, { ...admin, body: { description: 'Described' } })).status).toBe(200);
    expect((await api.patch(path, { ...admin, body: { description: 'Described' } })).status).toBe(200);
    expect((await api.delete(path, admin)).status).toBe(204);
    const events = await eventsOf(key, ['category.created', 'category.updated', 'category.deleted'], id);
    expect(events.map(({ type, data }) => ({ type, data }))).toEqual([
      { type: 'category.created', data: created.body },
      { type: 'category.updated', data: { ...created.body, description: 'Described', version: 2 } },
      // As it was: its last version (a deletion is final, whatever the version: ids are never used again).
      { type: 'category.deleted', data: { ...created.body, description: 'Described', version: 2 } },
    ]);
  });
});
