import { EventBodies, FeedPositionTokens } from './event-bodies';
import {
  compareFeedPositions,
  EventLog,
  EventLogQuery,
  FeedPage,
  FeedPosition,
  FeedRequest,
  LoggedEvent,
} from './event.ports';
import { EventRelay, EventRelayObserver, EventRelaySettings, EventStream, FeedEvent, StreamEnd } from './event-relay';

/** The feed of a fixed list of events (the relay's part only: the SQL is PgEventLog's, tested on PostgreSQL). */
class ListedFeed extends EventLog {
  constructor(readonly events: FeedEvent[]) {
    super();
  }
  async feed(_query: EventLogQuery, { limit, after }: FeedRequest): Promise<FeedPage> {
    const rest = this.events.filter((e) => !after || compareFeedPositions(e.position, after) > 0);
    return { items: rest.slice(0, limit), hasMore: rest.length > limit };
  }
  list(): never {
    throw new Error('not used');
  }
  findById(): Promise<LoggedEvent | null> {
    throw new Error('not used');
  }
  purgeBatch(): Promise<number> {
    throw new Error('not used');
  }
}

/** A stream in memory whose publishes can be held (a slow ack) or made to fail after storing (a lost ack). */
class MemoryStream extends EventStream {
  readonly stored: FeedEvent[] = [];
  /** The body of each message stored. */
  readonly bodies: string[] = [];
  hold: Promise<void> | null = null;
  /** Publishes begun. */
  begun = 0;
  loseNextAck = false;
  connected = true;
  open(): Promise<void> {
    return Promise.resolve();
  }
  async end(): Promise<StreamEnd | null> {
    const last = this.stored.at(-1);
    return last ? { position: last.position, sequence: this.stored.length } : null;
  }
  async publish(event: FeedEvent, body: string, after: number): Promise<{ sequence: number; duplicate: boolean }> {
    this.begun++;
    if (this.hold) await this.hold;
    if (after !== this.stored.length) throw new Error(`wrong last sequence ${after}`);
    this.stored.push(event);
    this.bodies.push(body);
    if (this.loseNextAck) {
      this.loseNextAck = false;
      throw new Error('timeout waiting for the ack');
    }
    return { sequence: this.stored.length, duplicate: false };
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

const events = (count: number): FeedEvent[] =>
  Array.from({ length: count }, (_, i) => ({
    id: `event-${i + 1}`,
    type: 'order.placed',
    subjectOwnerId: 1,
    endpointId: null,
    body: `{"n":${i + 1}}`,
    createdAt: new Date(2026, 0, 1),
    seq: i + 1,
    position: { xact: String(100 + i), seq: i + 1 },
  }));

function observer(): EventRelayObserver & { downs: string[] } {
  const downs: string[] = [];
  return {
    downs,
    relayed: () => undefined,
    behindSince: () => undefined,
    brokerUp: () => undefined,
    brokerDown: (reason) => downs.push(reason),
    feedFailed: () => undefined,
  };
}

/** Positions as `<xact>:<seq>` (the API's are encrypted: EventPositions). */
class PlainTokens extends FeedPositionTokens {
  token({ xact, seq }: FeedPosition): string {
    return `${xact}:${seq}`;
  }
}
const bodies = new EventBodies(new PlainTokens());

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
}

describe('EventRelay (the loop; NATS and PostgreSQL themselves in apps/api/test/event-relay.e2e.spec.ts)', () => {
  const fast = new EventRelaySettings(2, 1, 1);

  it('after a lost ack, resumes from the stream end: the event stored is not published again', async () => {
    const log = new ListedFeed(events(5));
    const stream = new MemoryStream();
    stream.loseNextAck = true;
    const seen = observer();
    const relay = new EventRelay(log, stream, seen, bodies, fast);
    relay.start();
    await until(() => stream.stored.length === 5);
    await relay.stop();
    expect(stream.stored.map((e) => e.id)).toEqual(log.events.map((e) => e.id));
    expect(seen.downs).toEqual(['timeout waiting for the ack']);
  });

  it('publishes each event with the body its webhook deliveries carry: the stored one and its position', async () => {
    const log = new ListedFeed(events(2));
    const stream = new MemoryStream();
    const relay = new EventRelay(log, stream, observer(), bodies, fast);
    relay.start();
    await until(() => stream.stored.length === 2);
    await relay.stop();
    expect(stream.bodies).toEqual(['{"n":1,"position":"100:1"}', '{"n":2,"position":"101:2"}']);
    expect(stream.bodies).toEqual(log.events.map((event) => bodies.sent(event)));
  });

  it('on stop, finishes the publish in progress and starts no other', async () => {
    const log = new ListedFeed(events(5));
    const stream = new MemoryStream();
    let release = () => undefined as void;
    stream.hold = new Promise((resolve) => (release = resolve));
    const relay = new EventRelay(log, stream, observer(), bodies, fast);
    relay.start();
    await until(() => stream.begun === 1);
    let stopped = false;
    const stopping = relay.stop().then(() => (stopped = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(stream.stored.map((e) => e.id)).toEqual(['event-1']);
  });
});
