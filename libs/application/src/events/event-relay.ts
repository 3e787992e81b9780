import { EventBodies } from './event-bodies';
import { EventLog, FeedPosition, LoggedEvent } from './event.ports';

/** An event of the feed: settled, so it has its position. */
export type FeedEvent = LoggedEvent & { position: FeedPosition };

/** Where the stream ends: the feed position of its last event and the stream's own sequence of it. */
export interface StreamEnd {
  position: FeedPosition;
  /** The stream's sequence number of that message (0: the stream is empty). */
  sequence: number;
}

/**
 * A broker stream the events are relayed to (NATS JetStream: NatsEventStream). The relay is its only writer: each
 * message carries its event's feed position, so the stream itself says where the relay stopped.
 */
export abstract class EventStream {
  /** Connects (once; the connection then reconnects by itself) and creates the stream if missing. */
  abstract open(): Promise<void>;
  /** The stream's last event, read from the stream; null when it holds none. */
  abstract end(): Promise<StreamEnd | null>;
  /**
   * Publishes one event with `body` (EventBodies: what its webhook deliveries carry) and resolves once the broker has
   * stored it (its ack), with its stream sequence. `after` is the sequence the stream must end at before it (0:
   * empty): another writer's message in between refuses this one. The event's id is the broker's de-duplication id,
   * so a retry of a publish whose ack was lost stores nothing.
   */
  abstract publish(event: FeedEvent, body: string, after: number): Promise<{ sequence: number; duplicate: boolean }>;
  /** Whether the connection to the broker is up now (it may drop between two publishes). */
  abstract get connected(): boolean;
  abstract close(): Promise<void>;
}

/** What the relay reports: to the metrics and the log. */
export interface EventRelayObserver {
  relayed(event: FeedEvent): void;
  /**
   * How far the relay is behind the feed's end: the time the oldest event not relayed yet was recorded (its age is the
   * lag), or null when it has caught up.
   */
  behindSince(recordedAt: Date | null): void;
  brokerUp(reason?: string): void;
  brokerDown(reason: string): void;
  /** The feed could not be read (PostgreSQL): retried. */
  feedFailed(reason: string): void;
}

export class EventRelaySettings {
  constructor(
    /** Events read from the feed at a time. */
    readonly batchSize = 200,
    /** How long the relay waits at the feed's end before reading it again. */
    readonly pollMs = 200,
    /** How long it waits after a failure (broker or database) before trying again. */
    readonly retryMs = 1000,
  ) {}
}

/** A failure of the broker, told from one of the database (the log says which). */
class BrokerFailure extends Error {}

/**
 * Relays the commit-order feed (every account's events: the store's own back office reads the stream) to an
 * EventStream, one event at a time, each published only after the previous one's ack: the stream holds the feed's
 * order. Exactly once: on start and after any failure, the relay reads where the stream ends (the last message's
 * position) and continues after it, so a crash or a lost ack between a publish and anything else neither loses nor
 * repeats an event; the event id as de-duplication id covers a publish retried inside the broker's window. While the
 * broker is down, the events wait in the log (they are committed there already) and the relay retries.
 *
 * Hand-written: no library relays a PostgreSQL feed to JetStream; the broker's client does the rest (reconnection,
 * de-duplication, the ack).
 */
export class EventRelay {
  private stopping = false;
  private wake: (() => void) | null = null;
  private running: Promise<void> | null = null;
  private up: boolean | null = null;
  /** The position of the stream's last event, once read from the stream (null: the stream is empty). */
  private relayedUpTo: FeedPosition | null | undefined = undefined;

  constructor(
    private readonly log: EventLog,
    private readonly stream: EventStream,
    private readonly observer: EventRelayObserver,
    /** The body of each message: the one every webhook delivery of the event carries. */
    private readonly bodies: EventBodies,
    private readonly settings = new EventRelaySettings(),
  ) {}

  /** Starts relaying in the background; `stop` ends it. */
  start(): void {
    this.running ??= this.run();
  }

  /** Stops after the publish in progress (if any) has its ack or fails; resolves when the relay has stopped. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.running;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      try {
        await this.broker(() => this.stream.open());
        const end = await this.broker(() => this.stream.end());
        await this.follow(end);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        if (error instanceof BrokerFailure) {
          this.markDown(reason);
          await this.notePending();
        } else this.observer.feedFailed(reason);
        await this.pause(this.settings.retryMs);
      }
    }
  }

  /** From the stream's end on: reads the feed after it and publishes each event in turn, until stopped or failed. */
  private async follow(end: StreamEnd | null): Promise<void> {
    this.relayedUpTo = end?.position ?? null;
    let sequence = end?.sequence ?? 0;
    while (!this.stopping) {
      const page = await this.log.feed({}, { limit: this.settings.batchSize, ...this.after() });
      if (page.items.length === 0) {
        this.observer.behindSince(null);
        // At the feed's end nothing is published: a connection lost meanwhile is noticed (and logged) here.
        if (!this.stream.connected) throw new BrokerFailure('connection to the broker lost');
        await this.pause(this.settings.pollMs);
        continue;
      }
      for (const event of page.items) {
        if (this.stopping) return;
        this.observer.behindSince(event.createdAt);
        const body = this.bodies.sent(event);
        const ack = await this.broker(() => this.stream.publish(event, body, sequence));
        sequence = ack.sequence;
        this.relayedUpTo = event.position;
        if (!ack.duplicate) this.observer.relayed(event);
      }
    }
  }

  private after(): { after?: FeedPosition } {
    return this.relayedUpTo ? { after: this.relayedUpTo } : {};
  }

  /**
   * While the broker is down, events keep being recorded: the oldest one not relayed is read from the feed so that
   * the lag grows meanwhile (once the stream's end has been read: before, where the relay stands is unknown).
   */
  private async notePending(): Promise<void> {
    if (this.relayedUpTo === undefined) return;
    try {
      const [next] = (await this.log.feed({}, { limit: 1, ...this.after() })).items;
      this.observer.behindSince(next?.createdAt ?? null);
    } catch {
      // The database too: its own failure is reported by the next read of the feed.
    }
  }

  /** A broker call: a success says the broker is up (logged once when it was down), a failure is a BrokerFailure. */
  private async broker<T>(call: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await call();
    } catch (error) {
      throw new BrokerFailure(error instanceof Error ? error.message : String(error));
    }
    if (this.up !== true) {
      this.up = true;
      this.observer.brokerUp();
    }
    return result;
  }

  private markDown(reason: string): void {
    if (this.up === false) return;
    this.up = false;
    this.observer.brokerDown(reason);
  }

  /** Waits `ms`, or less if `stop` is called meanwhile. */
  private async pause(ms: number): Promise<void> {
    if (this.stopping) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wake = null;
  }
}
