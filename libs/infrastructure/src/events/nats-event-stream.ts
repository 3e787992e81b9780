import { JetStreamApiCodes, JetStreamApiError, jetstream, jetstreamManager, StorageType } from '@nats-io/jetstream';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { connect, headers } from '@nats-io/transport-node';
import type { NatsConnection, NodeConnectionOptions } from '@nats-io/transport-node';
import { EventStream, FeedEvent, FeedPosition, StreamEnd } from '@petstore/application';

/** Where the relay publishes (EVENTS_NATS_*). */
export interface NatsEventStreamSettings {
  /** `nats://[user:password@]host:port` (or `tls://`); a user alone is a token. */
  url: string;
  /** The JetStream stream (created with file storage if missing). */
  stream: string;
  /** Each event's subject is `<prefix>.<event type>`; the stream takes `<prefix>.>`. */
  subjectPrefix: string;
  /** How long a publish or a request waits for the broker's answer (ms). */
  timeoutMs?: number;
}

/** The headers of a relayed event (docs/api.md, "A NATS stream as a destination"). */
export const EVENT_STREAM_HEADERS = {
  /** JetStream's de-duplication id: the event's id (its webhook-id). */
  msgId: 'Nats-Msg-Id',
  /** The event's feed position, `<transaction>:<seq>`: where the relay resumes from. */
  position: 'Petstore-Position',
  type: 'Petstore-Event-Type',
} as const;

const formatPosition = (position: FeedPosition): string => `${position.xact}:${position.seq}`;

function parsePosition(text: string | undefined): FeedPosition | null {
  const match = /^(\d+):(\d+)$/.exec(text ?? '');
  return match ? { xact: match[1] as string, seq: Number(match[2]) } : null;
}

/**
 * The connection options of a URL: nats.js takes credentials as options, not in the server URL, so they are
 * taken out of it here (a URL with a password is a secret setting, EVENTS_NATS_URL_FILE).
 */
export function natsConnectionOptions(url: string): NodeConnectionOptions {
  const parsed = new URL(url);
  const user = decodeURIComponent(parsed.username);
  const pass = decodeURIComponent(parsed.password);
  const server = `${parsed.protocol}//${parsed.host}`;
  return {
    servers: server,
    ...(user && pass ? { user, pass } : user ? { token: user } : {}),
    ...(parsed.protocol === 'tls:' ? { tls: {} } : {}),
  };
}

/**
 * A NATS JetStream stream as an EventStream. One connection, reconnecting forever by itself (the broker restarted:
 * its file storage keeps the stream); the relay is the stream's only writer, and every message says its event's
 * position, so the stream's last message is where the relay resumes.
 */
export class NatsEventStream extends EventStream {
  private connection: NatsConnection | null = null;
  private js: JetStreamClient | null = null;
  private jsm: JetStreamManager | null = null;
  private up = false;
  private readonly timeoutMs: number;

  constructor(private readonly settings: NatsEventStreamSettings) {
    super();
    this.timeoutMs = settings.timeoutMs ?? 5000;
  }

  get connected(): boolean {
    return this.up;
  }

  async open(): Promise<void> {
    if (!this.connection) {
      const connection = await connect({
        ...natsConnectionOptions(this.settings.url),
        name: 'petstore-event-relay',
        maxReconnectAttempts: -1,
        reconnectTimeWait: 1000,
        timeout: this.timeoutMs,
      });
      this.connection = connection;
      this.up = true;
      void this.watch(connection);
      this.js = jetstream(connection, { timeout: this.timeoutMs });
      this.jsm = await jetstreamManager(connection, { timeout: this.timeoutMs });
    }
    await this.ensureStream();
  }

  /** The connection's state as its status events say (the relay reads it between publishes). */
  private async watch(connection: NatsConnection): Promise<void> {
    for await (const status of connection.status()) {
      if (status.type === 'disconnect' || status.type === 'close') this.up = false;
      if (status.type === 'reconnect') this.up = true;
    }
  }

  /** Creates the stream with file storage if it is missing; an existing one is kept as its operator configured it. */
  private async ensureStream(): Promise<void> {
    const jsm = this.manager();
    try {
      await jsm.streams.info(this.settings.stream);
    } catch (error) {
      if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound)) throw error;
      await jsm.streams.add({
        name: this.settings.stream,
        subjects: [`${this.settings.subjectPrefix}.>`],
        storage: StorageType.File,
      });
    }
  }

  async end(): Promise<StreamEnd | null> {
    const jsm = this.manager();
    const { state } = await jsm.streams.info(this.settings.stream);
    if (state.last_seq === 0) return null;
    const last = await jsm.streams.getMessage(this.settings.stream, { seq: state.last_seq });
    const position = parsePosition(last?.header.get(EVENT_STREAM_HEADERS.position));
    if (!last || !position) {
      // Without it, the relay cannot tell where it stopped: starting over would repeat every event still logged.
      throw new Error(
        `the last message of stream ${this.settings.stream} (sequence ${state.last_seq}) is missing or has no ` +
          `${EVENT_STREAM_HEADERS.position} header: the stream's subjects must be the relay's alone`,
      );
    }
    return { position, sequence: last.seq };
  }

  async publish(event: FeedEvent, body: string, after: number): Promise<{ sequence: number; duplicate: boolean }> {
    const js = this.js;
    if (!js) throw new Error('the event stream is not open');
    const h = headers();
    h.set(EVENT_STREAM_HEADERS.position, formatPosition(event.position));
    h.set(EVENT_STREAM_HEADERS.type, event.type);
    h.set('Content-Type', 'application/json');
    // The body every webhook delivery of the event carries: one builder, EventBodies (the relay's).
    const ack = await js.publish(`${this.settings.subjectPrefix}.${event.type}`, body, {
      msgID: event.id,
      headers: h,
      timeout: this.timeoutMs,
      expect: { streamName: this.settings.stream, lastSequence: after },
    });
    return { sequence: ack.seq, duplicate: ack.duplicate };
  }

  async close(): Promise<void> {
    const connection = this.connection;
    this.connection = null;
    this.js = null;
    this.jsm = null;
    this.up = false;
    await connection?.close();
  }

  private manager(): JetStreamManager {
    if (!this.jsm) throw new Error('the event stream is not open');
    return this.jsm;
  }
}
