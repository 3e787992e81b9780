import { capturedLog } from './support/log-capture';
import { StoreFixtures } from './support/store-fixtures';
import { TestApp, expectError } from './support/test-app';
import { eventually, WebhookReceiver } from './support/webhook-receiver';

// Deliveries wait for pg-boss's polling (0.5 s); a failed attempt waits an hour here, longer than the test.
jest.setTimeout(60_000);

const HOUR = 3_600_000;

/**
 * A restored copy tells the truth (issue 50): started with WEBHOOKS_DELIVERY=off, it answered a ping 202 and a retry
 * of a delivered delivery 202, turning it back to pending, though it sends nothing; its start-up line counted
 * nothing held. Production first (delivery on), then a copy of its database (the same one) started with it off.
 */
describe('WEBHOOKS_DELIVERY=off (HTTP, real PostgreSQL, a local receiver)', () => {
  let production: TestApp | undefined;
  let copy: TestApp | undefined;
  let receiver: WebhookReceiver;

  beforeAll(async () => (receiver = await WebhookReceiver.start()));
  afterAll(async () => {
    await copy?.close();
    await production?.close();
    await receiver?.close();
  });

  it('refuses pings, retries, recoveries 409 webhook_delivery_off, changes nothing, counts what is held', async () => {
    production = await TestApp.start({
      messaging: { worker: true },
      webhooks: { allowPrivate: true, retryDelaysMs: [HOUR, HOUR] },
    });
    const store = await StoreFixtures.on(production);
    const customer = await production.customer('Restored');
    const endpoint = async (path: string) => {
      const created = await production!.post('/webhooks/endpoints', {
        key: customer.key,
        body: { url: `${receiver.url}${path}`, events: ['order.placed'] },
      });
      expect(created.status).toBe(201);
      return created.body.id as number;
    };
    const up = await endpoint('/up');
    const down = await endpoint('/down');
    receiver.answer = (request) => (request.path === '/up' ? 204 : 503);
    await store.placed(customer.key, await store.pet({ quantity: 1 }));
    const deliveriesOf = (api: TestApp, hook: number) =>
      api.get(`/webhooks/endpoints/${hook}/deliveries`, { key: customer.key }).then((r) => r.body);
    const [delivered] = await eventually(
      () => deliveriesOf(production!, up),
      (list) => list[0]?.status === 'delivered',
    );
    const [pending] = await eventually(
      () => deliveriesOf(production!, down),
      (list) => list[0]?.attempts === 1,
    );
    expect(pending).toMatchObject({ status: 'pending' });
    await store.close();
    const { databaseUrl } = production;
    await production.close();
    production = undefined;
    const sent = receiver.received.length;
    const pings = async () =>
      (await copy!.sql(`SELECT count(*)::int AS n FROM webhook_events WHERE type = 'ping'`))[0].n;

    const { lines, logger } = capturedLog();
    copy = await TestApp.startOn(
      databaseUrl,
      { messaging: { worker: true }, webhooks: { allowPrivate: true, delivery: 'off' } },
      { logger },
    );

    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        context: 'Webhooks',
        msg: expect.stringMatching(
          /^WEBHOOKS_DELIVERY=off: no webhook is sent by this process; 1 pending delivery is held/,
        ),
      }),
    );

    const ping = await copy.post(`/webhooks/endpoints/${up}/test`, { key: customer.key });
    expectError(ping, 409, 'webhook_delivery_off');
    for (const [hook, delivery] of [
      [up, delivered],
      [down, pending],
    ] as const) {
      const retried = await copy.post(`/webhooks/endpoints/${hook}/deliveries/${delivery.id}/retry`, {
        key: customer.key,
      });
      expectError(retried, 409, 'webhook_delivery_off');
      expect(await deliveriesOf(copy, hook)).toEqual([delivery]); // unchanged: status, attempts, nextAttemptAt
      const since = new Date(Date.now() - HOUR).toISOString();
      const recovered = await copy.post(`/webhooks/endpoints/${hook}/recover`, {
        key: customer.key,
        body: { since, all: true },
      });
      expectError(recovered, 409, 'webhook_delivery_off');
      expect(await deliveriesOf(copy, hook)).toEqual([delivery]);
    }
    // Not even the ping's event: nothing was queued for anybody.
    expect(await pings()).toBe(0);
    expect(receiver.received).toHaveLength(sent);
  });
});
