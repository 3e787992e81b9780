import { jetstreamManager, StorageType } from '@nats-io/jetstream';
import type { JetStreamManager } from '@nats-io/jetstream';
import { connect, nanos } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { EventBodies, EventLog } from '@petstore/application';
import { NatsEventStream } from '@petstore/infrastructure';
import { eventually } from './support/eventually';
import { capturedLog } from './support/log-capture';
import { findNatsServer, NatsServer } from './support/nats-server';
import { StoreFixtures } from './support/store-fixtures';
import { ADMIN_KEY, TestApp } from './support/test-app';
import { WebhookReceiver } from './support/webhook-receiver';

// A broker restart, reconnection, and several app instances.
jest.setTimeout(120_000);

const nats = findNatsServer();
if ('missing' in nats) console.warn(`event-relay.e2e: skipped: ${nats.missing}.`);

const STREAM = 'TEST_EVENTS';
const PREFIX = 'test.events';

/** A message of the stream as the relay published it. */
interface StreamMessage {
  seq: number;
  subject: string;
  msgId: string | undefined;
  type: string | undefined;
  body: string;
}

/**
 * The relay to NATS JetStream (EVENTS_NATS_URL) against a real nats-server of the test's own and real PostgreSQL:
 * events written through the HTTP API reach the stream once each, in the feed's commit order, with the body a webhook
 * delivery carries; across a broker restart while writes go on; across a relay restart and a crash after a publish;
 * with two relays started at once.
 */
('binary' in nats ? describe : describe.skip)('event relay to a NATS JetStream stream (real nats-server)', () => {
  let server: NatsServer;
  let connection: NatsConnection;
  let jsm: JetStreamManager;
  let api: TestApp;
  let store: StoreFixtures;
  /** An administrator's webhook endpoint subscribed to every event: the first test compares the bodies. */
  let receiver: WebhookReceiver;
  /** The first app's log. */
  let log: ReturnType<typeof capturedLog>;
  const relayConfig = () => ({
    messaging: { worker: true },
    webhooks: { allowPrivate: true },
    eventStream: { natsUrl: server.url, natsStream: STREAM, natsSubjectPrefix: PREFIX },
  });

  beforeAll(async () => {
    server = await NatsServer.start((nats as { binary: string }).binary);
    // The stream made beforehand (the relay keeps an existing one), with a de-duplication window of 100 ms: the
    // stream's end, where the relay resumes from, is what keeps events from repeating, not the window.
    await (
      await manager()
    ).streams.add({ name: STREAM, subjects: [`${PREFIX}.>`], storage: StorageType.File, duplicate_window: nanos(100) });
    log = capturedLog();
    receiver = await WebhookReceiver.start();
    api = await TestApp.start(relayConfig(), { logger: log.logger });
    store = await StoreFixtures.on(api);
  });
  afterAll(async () => {
    await store?.close();
    await api?.close();
    await receiver?.close();
    await connection?.close();
    await server?.close();
  });

  /** The test's own connection to the broker (made again after a restart by nats.js itself). */
  async function manager(): Promise<JetStreamManager> {
    if (!jsm) {
      connection = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 200 });
      jsm = await jetstreamManager(connection);
    }
    return jsm;
  }

  /** Every message of the stream, oldest first. */
  async function streamMessages(): Promise<StreamMessage[]> {
    const m = await manager();
    const { state } = await m.streams.info(STREAM);
    const messages: StreamMessage[] = [];
    for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
      const stored = await m.streams.getMessage(STREAM, { seq });
      if (!stored) continue;
      messages.push({
        seq: stored.seq,
        subject: stored.subject,
        msgId: stored.header.get('Nats-Msg-Id'),
        type: stored.header.get('Petstore-Event-Type'),
        body: new TextDecoder().decode(stored.data),
      });
    }
    return messages;
  }

  async function streamCount(): Promise<number> {
    return (await (await manager()).streams.info(STREAM)).state.messages;
  }

  /** Every event of the feed in commit order, as an administrator reads it (GET /events?order=commit). */
  async function feed(): Promise<{ id: string; type: string; position: string }[]> {
    const events: { id: string; type: string; position: string }[] = [];
    for (;;) {
      const after = events.at(-1)?.position;
      const query = after ? `startingAfter=${encodeURIComponent(after)}` : 'order=commit';
      const page = await api.get(`/events?${query}&limit=100`, { key: ADMIN_KEY });
      expect(page.status).toBe(200);
      events.push(...page.body);
      if (page.body.length < 100) return events;
    }
  }

  /** The events of the log (no pings), counted in PostgreSQL. */
  async function loggedCount(): Promise<number> {
    const [row] = await api.sql<{ n: string }>('SELECT count(*) AS n FROM webhook_events WHERE endpoint_id IS NULL');
    return Number(row?.n);
  }

  /** Waits until the stream has caught up with the log, then checks it is the feed: once each, in order. */
  async function expectStreamIsTheFeed(): Promise<StreamMessage[]> {
    const logged = await loggedCount();
    await eventually(streamCount, (count) => count >= logged, 60_000, 100);
    const messages = await streamMessages();
    const events = await feed();
    expect(messages.map((m) => m.msgId)).toEqual(events.map((e) => e.id));
    expect(new Set(messages.map((m) => m.msgId)).size).toBe(messages.length);
    expect(messages.map((m) => m.subject)).toEqual(events.map((e) => `${PREFIX}.${e.type}`));
    expect(messages.map((m) => m.type)).toEqual(events.map((e) => e.type));
    return messages;
  }

  /** Writes through the API from several clients at once: stock changes, orders, pets created and renamed. */
  async function writeConcurrently(rounds: number): Promise<void> {
    const customers = await Promise.all([api.customer('Relay A'), api.customer('Relay B')]);
    const petId = await store.pet({ quantity: 1000 });
    await Promise.all([
      ...customers.map(async ({ key }) => {
        for (let i = 0; i < rounds; i++) await store.placed(key, petId);
      }),
      (async () => {
        for (let i = 0; i < rounds; i++) await store.setStock(petId, 1000 + i);
      })(),
      (async () => {
        for (let i = 0; i < rounds; i++) {
          const id = await store.pet();
          await api.patch(`/pets/${id}`, { key: ADMIN_KEY, body: { name: `Renamed ${i}` } });
        }
      })(),
    ]);
  }

  /** A series of this app's `GET /metrics`, as text. */
  async function metric(name: string): Promise<string | undefined> {
    const text = (await api.get('/metrics', { key: ADMIN_KEY })).body as string;
    return new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1];
  }
  const brokerUp = () => metric('events_relay_broker_up');
  const lagSeconds = async () => Number(await metric('events_relay_lag_seconds'));

  it('relays every event written by concurrent writers once, in commit order, with the webhook body', async () => {
    const types = (await api.get('/openapi.json')).body.components.schemas.EventType.enum as string[];
    const endpoint = await api.post('/webhooks/endpoints', {
      key: ADMIN_KEY,
      body: { url: `${receiver.url}/relay`, events: types },
    });
    expect(endpoint.status).toBe(201);
    // The events before the endpoint (the fixtures') are the feed's first: they are not delivered to it.
    const before = await loggedCount();
    await writeConcurrently(10);
    const messages = await expectStreamIsTheFeed();
    expect(messages.length).toBeGreaterThan(40);
    // The body is the one every webhook delivery of the event carries (EventBodies, one builder): the body the
    // outbox keeps, with the event's position in the feed (the one GET /events?order=commit lists it with).
    const written = messages.slice(before);
    const delivered = await eventually(
      () => new Map(receiver.to('/relay').map((r) => [r.headers['webhook-id'] as string, r.body])),
      (bodies) => written.every((m) => bodies.has(m.msgId as string)),
      60_000,
      100,
    );
    const positions = new Map((await feed()).map((event) => [event.id, event.position]));
    expect(written.length).toBeGreaterThan(40);
    for (const message of written) {
      expect(message.body).toBe(delivered.get(message.msgId as string));
      expect(JSON.parse(message.body).position).toBe(positions.get(message.msgId as string));
    }
    const metrics = (await api.get('/metrics', { key: ADMIN_KEY })).body as string;
    expect(metrics).toMatch(new RegExp(`^events_relayed_total ${messages.length}$`, 'm'));
    // Caught up: nothing waits.
    await eventually(lagSeconds, (lag) => lag === 0, 30_000, 100);
    expect(await brokerUp()).toBe('1');
  });

  it('loses and repeats nothing across a broker restart while writes go on', async () => {
    const before = await streamCount();
    const writing = writeConcurrently(15);
    await eventually(streamCount, (count) => count > before + 5, 30_000, 20);
    await server.stop();
    await eventually(brokerUp, (up) => up === '0', 30_000, 100);
    // Written while the broker is down: they wait in PostgreSQL.
    const downAt = await loggedCount();
    await writeConcurrently(3);
    expect(await loggedCount()).toBeGreaterThan(downAt);
    // They are counted as waiting: the lag is the age of the oldest one not in the stream.
    await eventually(lagSeconds, (lag) => lag > 0, 30_000, 100);
    await server.restart();
    await writing;
    await eventually(brokerUp, (up) => up === '1', 30_000, 100);
    await expectStreamIsTheFeed();
    // One line when the broker was lost and one when it was back, not one per retry.
    const said = (start: string) => log.lines.filter((line) => String(line['msg']).startsWith(start)).length;
    expect([said('NATS broker lost'), said('NATS broker back')]).toEqual([1, 1]);
  });

  it('does not repeat an event published just before a crash, nor with two relays started together', async () => {
    await api.close();
    // Written with no relay running.
    api = await TestApp.startOn(api.databaseUrl, { messaging: { worker: false } });
    await store.close();
    store = await StoreFixtures.on(api);
    await writeConcurrently(3);
    // A relay that crashed right after the broker stored the next event, before doing anything else.
    const log = api.app.get(EventLog);
    const bodies = api.app.get(EventBodies);
    const stream = new NatsEventStream({ url: server.url, stream: STREAM, subjectPrefix: PREFIX });
    await stream.open();
    const end = await stream.end();
    // The feed shows an event once no older transaction on the server is still running (another test file's may be,
    // on a shared PostgreSQL): wait for it rather than read once.
    const page = () => log.feed({}, { limit: 1, ...(end ? { after: end.position } : {}) });
    const [next] = (await eventually(page, ({ items }) => items.length > 0, 30_000, 100)).items;
    if (!next) throw new Error('the writes recorded no event');
    await stream.publish(next, bodies.sent(next), end?.sequence ?? 0);
    await stream.close();
    // Two instances with the relay start together: one relays (the advisory lock), from the stream's end.
    await api.close();
    const [first, second] = await Promise.all([
      TestApp.startOn(api.databaseUrl, relayConfig()),
      TestApp.startOn(api.databaseUrl, relayConfig()),
    ]);
    api = first;
    await store.close();
    store = await StoreFixtures.on(api);
    try {
      await writeConcurrently(3);
      await expectStreamIsTheFeed();
    } finally {
      await second.close();
    }
  });
});
