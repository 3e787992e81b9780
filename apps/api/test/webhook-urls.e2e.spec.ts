import { ADMIN_KEY, TestApp, expectError } from './support/test-app';
import { eventually, WebhookReceiver } from './support/webhook-receiver';

/**
 * Issue 48, item 8: endpoints of one account on one URL each got every event, so an account multiplied what the
 * service sent to a URL by its number of endpoints (every catalogue change, ten times). One endpoint per URL in an
 * account now: a second is refused (409 `webhook_url_taken`), on creation and on a change of URL; endpoints made
 * before the rule (or by the previous release beside this one) stay, and the fan-out sends each event once per URL.
 */
describe('one webhook endpoint per URL in an account (HTTP, real PostgreSQL, worker on, a local receiver)', () => {
  let api: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    api = await TestApp.start({ messaging: { worker: true }, webhooks: { allowPrivate: true } });
  });
  afterAll(async () => {
    await api?.close();
    await receiver?.close();
  });

  const create = (key: string, url: string, events = ['category.created']) =>
    api.post('/webhooks/endpoints', { key, body: { url, events } });
  const countOf = async (account: string) => {
    const [row] = await api.sql(
      `SELECT count(*)::int AS n FROM webhook_endpoints e JOIN accounts a ON a.id = e.owner_id WHERE a.name = $1`,
      [account],
    );
    return row.n as number;
  };

  it('refuses a second endpoint on the same URL (compared as parsed), for that account only', async () => {
    const { key } = await api.customer('One URL');
    const url = `${receiver.url}/same`;
    const first = await create(key, url);
    expect(first.status).toBe(201);
    for (const again of [url, url.replace('http://', 'HTTP://')]) {
      const refused = await create(key, again, ['pet.created']);
      expectError(refused, 409, 'webhook_url_taken');
      expect(refused.body.message).toContain(String(first.body.id));
    }
    expect(await countOf('One URL')).toBe(1);
    // Another account may use that URL.
    const other = await api.customer('Same URL elsewhere');
    expect((await create(other.key, url)).status).toBe(201);
    // Another URL is another endpoint.
    expect((await create(key, `${receiver.url}/other`)).status).toBe(201);
  });

  it('refuses a change of URL to one another endpoint of the account has; its own URL may be sent again', async () => {
    const { key } = await api.customer('Moving URL');
    const a = await create(key, `${receiver.url}/a`);
    const b = await create(key, `${receiver.url}/b`);
    const moved = await api.patch(`/webhooks/endpoints/${b.body.id}`, { key, body: { url: `${receiver.url}/a` } });
    expectError(moved, 409, 'webhook_url_taken');
    expect((await api.get(`/webhooks/endpoints/${b.body.id}`, { key })).body.url).toBe(`${receiver.url}/b`);
    const same = await api.patch(`/webhooks/endpoints/${a.body.id}`, { key, body: { url: `${receiver.url}/a` } });
    expect(same.status).toBe(200);
    expect(
      (await api.patch(`/webhooks/endpoints/${b.body.id}`, { key, body: { url: `${receiver.url}/c` } })).status,
    ).toBe(200);
  });

  it('lets one of 8 concurrent creations on one URL through; the others get 409', async () => {
    const { key } = await api.customer('Racing URL');
    const responses = await Promise.all(Array.from({ length: 8 }, () => create(key, `${receiver.url}/race`)));
    expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
    for (const refused of responses.filter((r) => r.status !== 201)) expectError(refused, 409, 'webhook_url_taken');
    expect(await countOf('Racing URL')).toBe(1);
  });

  it('sends each event once to a URL that endpoints made before the rule share', async () => {
    const { key } = await api.customer('Old duplicates');
    const path = '/old-duplicates';
    const first = await create(key, `${receiver.url}${path}`);
    expect(first.status).toBe(201);
    // Two more on that URL, as the previous release could make them (it knows no such rule).
    await api.sql(
      `INSERT INTO webhook_endpoints (id, owner_id, url, events, secret, created_at)
       SELECT nextval('webhook_endpoints_id_seq'), owner_id, url, events, secret, created_at
         FROM webhook_endpoints, generate_series(1, 2) WHERE id = $1`,
      [first.body.id],
    );
    expect(await countOf('Old duplicates')).toBe(3);
    const category = await api.post('/categories', { key: ADMIN_KEY, body: { name: 'Once per URL' } });
    expect(category.status).toBe(201);
    // One fan-out makes every delivery of the event at once: once one has arrived, all were made.
    const received = await eventually(
      () => receiver.to(path).filter((r) => r.json.type === 'category.created'),
      (found) => found.length >= 1,
    );
    const [deliveries] = await api.sql(
      `SELECT count(*)::int AS n FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
        JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE e.url = $1 AND ev.type = 'category.created' AND (ev.body::jsonb -> 'data' ->> 'id')::bigint = $2`,
      [`${receiver.url}${path}`, category.body.id],
    );
    expect(deliveries.n).toBe(1);
    expect(received.filter((r) => r.json.data['id'] === category.body.id)).toHaveLength(1);
  });
});
