import { StoreFixtures } from './support/store-fixtures';
import { ADMIN_KEY, TestApp, TestResponse } from './support/test-app';
import { eventually, ReceivedWebhook, WebhookReceiver } from './support/webhook-receiver';

// Writers at once, then deliveries with retries (the first back-off is 5 s).
jest.setTimeout(180_000);

const admin = { key: ADMIN_KEY };
/** What a storefront with orders subscribes to (pet.status_changed is the administrators'; pet.updated says it). */
const EVENTS = [
  'pet.created',
  'pet.updated',
  'pet.deleted',
  'inventory.changed',
  'category.created',
  'category.updated',
  'category.deleted',
  'order.placed',
  'order.completed',
  'order.cancelled',
  'message.delivered',
];

type Json = Record<string, unknown>;
interface Delivery {
  id: string;
  type: string;
  data: Json & { version: number };
  position?: string;
}

/** The resource an event is about: `pet:7`, `inventory:7` (a pet's stock entry), `order:12`… */
function resourceOf({ type, data }: Delivery): string {
  const kind = type === 'inventory.changed' ? 'inventory' : type.split('.')[0];
  return `${kind}:${String(kind === 'inventory' ? data['petId'] : data['id'])}`;
}

/**
 * A consumer's copy of the store, kept from deliveries in whatever order they come, by the rule docs/api.md gives:
 * keep the newest version of each resource (a delivery whose version is not newer than the one held is ignored); a
 * deletion removes the resource for good (ids are never used again), a pet's with its stock entry.
 */
class Mirror {
  readonly held = new Map<string, Delivery['data']>();
  readonly deleted = new Set<string>();

  apply(delivery: Delivery): void {
    const resource = resourceOf(delivery);
    if (delivery.type.endsWith('.deleted')) {
      const gone = delivery.type === 'pet.deleted' ? [resource, `inventory:${delivery.data['id']}`] : [resource];
      for (const key of gone) {
        this.deleted.add(key);
        this.held.delete(key);
      }
      return;
    }
    if (this.deleted.has(resource)) return;
    const held = this.held.get(resource);
    if (held && held.version >= delivery.data.version) return;
    this.held.set(resource, delivery.data);
  }
}

/** The same copy kept without the rule: the last delivery applied wins. */
class NaiveMirror extends Mirror {
  override apply(delivery: Delivery): void {
    const resource = resourceOf(delivery);
    if (delivery.type.endsWith('.deleted')) this.held.delete(resource);
    else this.held.set(resource, delivery.data);
  }
}

/** A seeded shuffle (mulberry32, Fisher-Yates): the same seed, the same order. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  let state = seed >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

/**
 * Issue 49, item 1: webhook deliveries arrive out of order (retries, several workers), and a consumer that applies them
 * by the documented rule still ends equal to the API. Several writers change the same pets, their stock, a category,
 * orders and messages at once while the deliveries go to a local receiver that answers some first attempts 503 (they
 * come again 5 s later, after newer ones) and holds others a moment; the deliveries it accepted are then applied in
 * shuffled orders, and each copy is compared with what the API answers now: no difference.
 */
describe('a mirror kept from webhook deliveries in any order ends equal to the API (HTTP, real PostgreSQL)', () => {
  let api: TestApp;
  let store: StoreFixtures;
  let receiver: WebhookReceiver;
  let customer: { key: string; id: number };
  const path = '/mirror';
  /** The first attempt of some events is refused: it comes again later, after newer deliveries. */
  const attempts = new Map<string, number>();
  /** Every status the writers met: none may be a 5xx, nor a 400 or 422 (a mistake of the test). */
  const statuses: number[] = [];

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    receiver.answer = (request) => {
      const id = request.headers['webhook-id'] as string;
      const attempt = (attempts.get(id) ?? 0) + 1;
      attempts.set(id, attempt);
      return attempt === 1 && id.charCodeAt(id.length - 1) % 5 === 0 ? 503 : 204;
    };
    receiver.hold = () => new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 150)));
    api = await TestApp.start({ messaging: { worker: true }, webhooks: { allowPrivate: true } });
    store = await StoreFixtures.on(api);
    customer = await api.customer('Mirror');
    // Subscribed before anything is made: every event of the test reaches it.
    const endpoint = await api.post('/webhooks/endpoints', {
      key: customer.key,
      body: { url: receiver.url + path, events: EVENTS },
    });
    expect(endpoint.status).toBe(201);
  });
  afterAll(async () => {
    await store?.close();
    await api?.close();
    await receiver?.close();
  });

  const noted = async (response: Promise<TestResponse>): Promise<TestResponse> => {
    const answered = await response;
    statuses.push(answered.status);
    return answered;
  };

  /** Several writers at once on the same resources; each change one request. */
  async function writeConcurrently(): Promise<{ pets: number[]; gone: number; category: number }> {
    const category = (await api.post('/categories', { ...admin, body: { name: `Mirrored ${Date.now()}` } })).body;
    const pets: number[] = [];
    for (let i = 0; i < 4; i++) {
      const created = await api.post('/pets', { ...admin, body: { name: `Mirrored ${i}`, categoryId: category.id } });
      pets.push(created.body.id);
      await store.setStock(created.body.id, 20);
    }
    const gone = (await api.post('/pets', { ...admin, body: { name: 'Short-lived', categoryId: category.id } })).body
      .id as number;
    const placed: number[] = [];
    const rounds = 12;
    const pick = (i: number) => pets[i % pets.length] as number;
    await Promise.all([
      (async () => {
        for (let i = 0; i < rounds; i++) {
          await noted(api.patch(`/pets/${pick(i)}`, { ...admin, body: { name: `Renamed ${i}` } }));
        }
      })(),
      (async () => {
        for (let i = 0; i < rounds; i++) {
          await noted(api.put(`/store/inventory/${pick(i + 1)}`, { ...admin, body: { quantity: 5 + ((i * 7) % 25) } }));
        }
      })(),
      (async () => {
        for (let i = 0; i < rounds; i++) {
          const order = await noted(store.order(customer.key, { petId: pick(i + 2), quantity: 1 + (i % 3) }));
          if (order.status !== 201) continue;
          if (i % 2) await noted(api.delete(`/store/orders/${order.body.id}`, { key: customer.key }));
          else placed.push(order.body.id);
        }
      })(),
      (async () => {
        for (let i = 0; i < rounds; i++) {
          // A hold and back: refused (409) when the stock or the orders do not allow it, as they may not by then.
          const status = i % 2 ? 'available' : 'pending';
          await noted(api.patch(`/pets/${pick(i + 3)}`, { ...admin, body: { status } }));
        }
      })(),
      (async () => {
        for (let i = 0; i < rounds; i++) {
          const body = i % 2 ? { description: `Described ${i}` } : { name: `${category.name} ${i}` };
          await noted(api.patch(`/categories/${category.id}`, { ...admin, body }));
        }
      })(),
      (async () => {
        for (let i = 0; i < rounds; i++) {
          const orderId = placed.shift();
          if (orderId !== undefined) {
            await noted(api.patch(`/store/orders/${orderId}`, { ...admin, body: { complete: true } }));
          }
          await noted(api.post('/messages', { key: customer.key, body: { message: `Mirrored ${i}` } }));
        }
      })(),
      (async () => {
        for (let i = 0; i < 4; i++) await noted(api.patch(`/pets/${gone}`, { ...admin, body: { name: `Going ${i}` } }));
        await noted(api.put(`/store/inventory/${gone}`, { ...admin, body: { quantity: 9 } }));
        await noted(api.delete(`/pets/${gone}`, admin));
      })(),
    ]);
    return { pets, gone, category: category.id };
  }

  /** Every event of the customer's feed (its own and the catalogue's), oldest first. */
  async function feed(): Promise<Array<{ id: string; type: string }>> {
    const events: Array<{ id: string; type: string; position: string }> = [];
    for (;;) {
      const after = events.at(-1)?.position;
      const query = after ? `startingAfter=${encodeURIComponent(after)}` : 'order=commit';
      const page = await api.get(`/events?${query}&limit=100`, { key: customer.key });
      events.push(...page.body);
      if (page.body.length < 100) return events;
    }
  }

  /** What the API answers now for a resource of the mirror (null: it is gone). */
  async function current(resource: string): Promise<Json | null> {
    const [kind, id] = resource.split(':');
    const paths: Record<string, string> = {
      pet: `/pets/${id}`,
      inventory: `/store/inventory/${id}`,
      category: `/categories/${id}`,
      order: `/store/orders/${id}`,
      message: `/messages/${id}`,
    };
    const response = await api.get(paths[kind as string] as string, { key: customer.key });
    if (response.status === 404) return null;
    expect(response.status).toBe(200);
    return response.body;
  }

  /** The resources where a mirror and the API differ, with both sides (their fields compared, in any order). */
  function differences(mirror: Mirror, truth: Map<string, Json | null>) {
    const canonical = (value: Json | null | undefined) =>
      value ? JSON.stringify(value, Object.keys(value).sort()) : String(value);
    return [...truth].flatMap(([resource, now]) => {
      const kept = mirror.deleted.has(resource) ? null : mirror.held.get(resource);
      return canonical(kept) === canonical(now) ? [] : [{ resource, kept: kept ?? 'missing', now }];
    });
  }

  it('applies the deliveries by the newest version, in arrival order and shuffled: 0 differences', async () => {
    const { pets, gone, category } = await writeConcurrently();
    expect(statuses.filter((status) => status >= 500 || status === 400 || status === 422)).toEqual([]);
    expect(statuses.filter((status) => status === 409).length).toBeLessThan(statuses.length / 2);
    // The worker delivers the messages; then every event of the feed reaches the receiver, accepted once.
    await eventually(
      async () => (await api.get('/messages?status=queued', admin)).body.length,
      (queued) => queued === 0,
      30_000,
    );
    const id = (r: ReceivedWebhook) => r.headers['webhook-id'] as string;
    /** The deliveries the receiver accepted (a refused first attempt is not applied: it comes again). */
    const accepted = () => receiver.to(path).filter((r) => !refusedFirst(r));
    const events = await feed();
    await eventually(
      () => new Set(accepted().map(id)),
      (ids) => events.every((event) => ids.has(event.id)),
      60_000,
    );
    const deliveries: Delivery[] = accepted().map((r) => ({
      id: id(r),
      type: r.json.type,
      data: r.json.data as Delivery['data'],
      position: r.json.position,
    }));
    expect(new Set(deliveries.map((d) => d.id)).size).toBe(events.length);
    expect(events.length).toBeGreaterThan(80);
    // Each carries the event's position and the resource's version.
    for (const delivery of deliveries) {
      expect(delivery.position).toMatch(/^[A-Za-z0-9_-]{32}$/);
      expect(delivery.data.version).toEqual(expect.any(Number));
    }

    // The truth: every resource the deliveries speak of, as the API answers now.
    const resources = new Set(deliveries.map(resourceOf));
    for (const petId of [...pets, gone]) expect(resources).toContain(`pet:${petId}`);
    expect(resources).toContain(`category:${category}`);
    const truth = new Map<string, Json | null>();
    for (const resource of resources) truth.set(resource, await current(resource));
    expect(truth.get(`pet:${gone}`)).toBeNull();
    expect(truth.get(`inventory:${gone}`)).toBeNull();

    const keep = (order: Delivery[], kind = Mirror) => {
      const mirror = new kind();
      for (const delivery of order) mirror.apply(delivery);
      return mirror;
    };
    // In the order they came: some came after a newer one about the same resource (the refused first attempts).
    const late = deliveries.filter((delivery, i) =>
      deliveries
        .slice(0, i)
        .some((d) => resourceOf(d) === resourceOf(delivery) && d.data.version > delivery.data.version),
    );
    expect(late.length).toBeGreaterThan(0);
    expect(differences(keep(deliveries), truth)).toEqual([]);
    // In any order: the same copy.
    const seeds = [1, 2, 3, 4, 5, 6, 7, 8];
    for (const seed of seeds)
      expect({ seed, differences: differences(keep(shuffled(deliveries, seed)), truth) }).toEqual({
        seed,
        differences: [],
      });
    // Without the rule, the same shuffles leave stale copies: the order does matter, and the rule is what copes.
    const naive = seeds.map((seed) => differences(keep(shuffled(deliveries, seed), NaiveMirror), truth).length);
    expect(naive.some((count) => count > 0)).toBe(true);
  });

  /** A first attempt the receiver refused (503): not applied, it comes again. */
  function refusedFirst(request: ReceivedWebhook): boolean {
    const id = request.headers['webhook-id'] as string;
    const first = receiver.to(path).find((r) => r.headers['webhook-id'] === id);
    return first === request && id.charCodeAt(id.length - 1) % 5 === 0;
  }
});
