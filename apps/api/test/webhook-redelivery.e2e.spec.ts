import { StoreFixtures } from './support/store-fixtures';
import { TestApp, expectError } from './support/test-app';
import { eventually, WebhookReceiver } from './support/webhook-receiver';

// Deliveries wait for pg-boss's polling (0.5 s); a failed attempt waits an hour here, longer than the test.
jest.setTimeout(60_000);

const HOUR = 3_600_000;

describe('redelivering a pending delivery now (HTTP, real PostgreSQL, worker on, a local receiver)', () => {
  let api: TestApp;
  let store: StoreFixtures;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    api = await TestApp.start({
      messaging: { worker: true },
      webhooks: { allowPrivate: true, retryDelaysMs: [HOUR, HOUR] },
    });
    store = await StoreFixtures.on(api);
  });
  afterAll(async () => {
    await store?.close();
    await api?.close();
    await receiver?.close();
  });

  it('sends a delivery waiting for its back-off at once (one of two retries wins), then backs off anew', async () => {
    const customer = await api.customer('Waiting');
    const url = `${receiver.url}/waiting`;
    const created = await api.post('/webhooks/endpoints', {
      key: customer.key,
      body: { url, events: ['order.placed'] },
    });
    expect(created.status).toBe(201);
    const hook = created.body.id as number;
    let up = false;
    receiver.answer = (request) => (request.path === '/waiting' && !up ? 503 : 204);
    const list = async () => (await api.get(`/webhooks/endpoints/${hook}/deliveries`, { key: customer.key })).body;
    const retry = (id: number) => api.post(`/webhooks/endpoints/${hook}/deliveries/${id}/retry`, { key: customer.key });

    await store.placed(customer.key, await store.pet({ quantity: 1 }));
    const [waiting] = await eventually(list, (deliveries) => deliveries[0]?.attempts === 1);
    expect(waiting).toMatchObject({ status: 'pending', lastStatusCode: 503 });
    expect(Date.parse(waiting.nextAttemptAt) - Date.now()).toBeGreaterThan(HOUR - 60_000);

    // Still down: the attempt is made now, fails, and the back-off starts again from it.
    const sent = await retry(waiting.id);
    expect(sent.status).toBe(202);
    expect(sent.body).toMatchObject({ id: waiting.id, status: 'pending', attempts: 1 });
    expect(Date.parse(sent.body.nextAttemptAt)).toBeLessThanOrEqual(Date.now());
    const [again] = await eventually(list, (deliveries) => deliveries[0]?.attempts === 2);
    expect(again).toMatchObject({ status: 'pending', lastStatusCode: 503 });
    expect(Date.parse(again.nextAttemptAt) - Date.now()).toBeGreaterThan(HOUR - 60_000);

    // Back up: of two retries at once, one sends it, the other finds its attempt due already.
    up = true;
    const answers = await Promise.all([retry(waiting.id), retry(waiting.id)]);
    expect(answers.map((a) => a.status).sort()).toEqual([202, 409]);
    expectError(answers.find((a) => a.status === 409)!, 409, 'delivery_pending');
    const [delivered] = await eventually(list, (deliveries) => deliveries[0]?.status === 'delivered');
    expect(delivered).toMatchObject({ id: waiting.id, attempts: 3, lastStatusCode: 204 });
    expect(receiver.to('/waiting')).toHaveLength(3);
    expect(new Set(receiver.to('/waiting').map((r) => r.headers['webhook-id'])).size).toBe(1);
  });
});
