import {
  BeforeApplicationShutdown,
  Injectable,
  Logger,
  Module,
  OnApplicationBootstrap,
  Optional,
} from '@nestjs/common';
import { Clock, EventBodies, EventLog, EventRelay, EventRelayObserver } from '@petstore/application';
import { NatsEventStream, SessionLock } from '@petstore/infrastructure';
import { ConfigPart } from '../config/app-config';
import { InjectConfig } from '../config/config.module';
import { JobQueueSettings } from '../jobs/job-queue.module';
import { EventRelayMetrics } from '../metrics/event-relay.metrics';
import { Metrics } from '../metrics/metrics';
import { EventsModule } from './events.module';

/** The advisory lock the relay runs under: one relay across instances, so that the stream keeps the feed's order. */
export const EVENT_RELAY_LOCK = 'petstore:event-relay';

/**
 * The event relay (EVENTS_NATS_URL set; the `worker` role): in whichever worker process holds the relay's advisory
 * lock, EventRelay publishes the commit-order feed to the NATS stream. The other workers wait for the lock, and one of
 * them takes over within seconds when its holder stops or dies (the lock goes with its session). On shutdown the relay
 * stops after the publish in progress, before the pool closes.
 */
@Injectable()
export class EventRelayHost implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('EventRelay');
  private stopping = false;
  private stop: () => void = () => undefined;
  private readonly stopped = new Promise<void>((resolve) => (this.stop = resolve));
  private supervising: Promise<void> | null = null;
  /** When the oldest event not relayed yet was recorded; null when the relay has caught up. */
  private behindSince: Date | null = null;

  constructor(
    private readonly log: EventLog,
    /** The messages' bodies: what each event's webhook deliveries carry. */
    private readonly bodies: EventBodies,
    private readonly clock: Clock,
    // A direct session (not through a transaction pooler), where a session lock holds: the job queue's start-up one.
    private readonly jobs: JobQueueSettings,
    @InjectConfig('eventStream') private readonly settings: ConfigPart<'eventStream'>,
    @Optional() private readonly metrics?: Metrics,
  ) {}

  onApplicationBootstrap(): void {
    if (this.settings.natsUrl === null) return;
    this.supervising = this.supervise(this.settings.natsUrl).catch((error: Error) =>
      this.logger.error(`The event relay stopped: ${error.message}`),
    );
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    this.stop();
    await this.supervising;
  }

  /** Takes the lock, relays while it holds it, and takes it again if its session is lost. */
  private async supervise(url: string): Promise<void> {
    const lag = () =>
      this.behindSince ? Math.max(0, (this.clock.now().getTime() - this.behindSince.getTime()) / 1000) : 0;
    let metrics: EventRelayMetrics | null = null;
    while (!this.stopping) {
      const lock = await SessionLock.acquire(this.jobs.startupLockUrl, EVENT_RELAY_LOCK, () => this.stopping);
      if (!lock) return;
      // Only the process that relays has the series: the workers waiting for the lock do not report a broker down.
      if (this.metrics) metrics ??= new EventRelayMetrics(this.metrics, lag);
      const { natsStream: stream, natsSubjectPrefix: subjectPrefix } = this.settings;
      this.logger.log(`Relaying events to NATS stream ${stream} (subjects ${subjectPrefix}.<event type>)`);
      const broker = new NatsEventStream({ url, stream, subjectPrefix });
      const relay = new EventRelay(this.log, broker, this.observer(metrics), this.bodies);
      relay.start();
      const lost = await Promise.race([lock.lost.then(() => true), this.stopped.then(() => false)]);
      if (lost) this.logger.warn('The event relay lost its database session (and lock): it stops, then takes it again');
      await relay.stop();
      await broker.close().catch(() => undefined);
      await lock.release();
    }
  }

  /** The metrics, and a log line when the broker is lost and one when it is back (not one per retry). */
  private observer(metrics: EventRelayMetrics | null): EventRelayObserver {
    let feedFailing = false;
    let wasDown = false;
    metrics?.brokerUp.set(0);
    return {
      relayed: () => {
        feedFailing = false;
        metrics?.relayed.inc();
      },
      behindSince: (recordedAt) => {
        feedFailing = false;
        this.behindSince = recordedAt;
      },
      brokerUp: () => {
        metrics?.brokerUp.set(1);
        this.logger.log(
          wasDown
            ? "NATS broker back: relaying from the stream's last event"
            : `Connected to NATS: relaying from the stream's last event`,
        );
      },
      brokerDown: (reason) => {
        wasDown = true;
        metrics?.brokerUp.set(0);
        this.logger.warn(`NATS broker lost (${reason}): events wait in PostgreSQL; retrying every second`);
      },
      feedFailed: (reason) => {
        if (!feedFailing) this.logger.warn(`The event relay cannot read the event log (${reason}): retrying`);
        feedFailing = true;
      },
    };
  }
}

/** The event relay, for the `worker` role (it does nothing unless EVENTS_NATS_URL is set). */
@Module({ imports: [EventsModule], providers: [EventRelayHost] })
export class EventRelayModule {}
