import { Counter, Gauge } from 'prom-client';
import { Metrics } from './metrics';

/**
 * The event relay's series (EVENTS_NATS_URL set, in the process that holds the relay's lock; docs/operations.md,
 * "Event stream"): events relayed, how far behind the feed's end it is, and whether the broker answers.
 */
export class EventRelayMetrics {
  readonly relayed: Counter;
  readonly lagSeconds: Gauge;
  readonly brokerUp: Gauge;

  /** `lagSeconds`: read when scraped (it grows while the relay waits). */
  constructor(metrics: Metrics, lagSeconds: () => number) {
    const registers = [metrics.registry];
    this.relayed = new Counter({
      name: 'events_relayed_total',
      help: 'Events this process published to the NATS stream (each acknowledged by the broker; repeats not counted).',
      registers,
    });
    this.lagSeconds = new Gauge({
      name: 'events_relay_lag_seconds',
      help:
        'How far the relay is behind the feed: the age of the oldest event not yet in the NATS stream (0: caught ' +
        'up). Grows while the broker is down.',
      registers,
      collect() {
        this.set(lagSeconds());
      },
    });
    this.brokerUp = new Gauge({
      name: 'events_relay_broker_up',
      help: 'Whether the relay reaches the NATS broker and its stream: 1 yes, 0 no (events wait in PostgreSQL).',
      registers,
    });
  }
}
