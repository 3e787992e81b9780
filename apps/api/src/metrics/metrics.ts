import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { routeOf } from '../common/http-kit/route-label';
import { RELEASE } from '../release/release';

/** Seconds: from a health probe (1 ms) to a slow order under contention (seconds). */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The Prometheus metrics of one application instance, in a registry of its own (tests run
 * several instances in one process): HTTP durations, rate-limit rejections, the process's
 * default metrics (memory, CPU, event-loop lag, GC) and whatever gauges the modules add.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly httpRequestDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP requests by method, route template and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  readonly rateLimitRejections = new Counter({
    name: 'rate_limit_rejections_total',
    help: 'Requests refused with 429 (rate_limited, too_many_auth_failures).',
    registers: [this.registry],
  });

  /** Always 1: the labels say which release runs (Prometheus' `build_info` convention). */
  readonly buildInfo = new Gauge({
    name: 'build_info',
    help: 'The running release: version, git commit and Node.js version as labels; the value is always 1.',
    labelNames: ['version', 'commit', 'node_version'] as const,
    registers: [this.registry],
  });

  /**
   * Whether the last scrape could not read a source of gauges (`gaugesFrom`): 1 yes (its gauges are absent from that
   * scrape), 0 no. With the database refusing, the queue gauges go and everything else stays.
   */
  readonly scrapeErrors = new Gauge({
    name: 'metrics_scrape_error',
    help: 'Whether the last scrape could not read the source of some gauges (absent then): 1 yes, 0 no.',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });
  /** The gauges read from a source when scraped, each source in a registry of its own (see `gaugesFrom`). */
  private readonly sources: Array<{ source: string; registry: Registry }> = [];

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    this.buildInfo.set({ version: RELEASE.version, commit: RELEASE.commit, node_version: process.version }, 1);
  }

  /**
   * A gauge read when scraped from the process's own state (a pool's counts, a probe's last answer): `collect` returns
   * its value. One that fails keeps its last value: prom-client would otherwise fail the whole scrape, and every other
   * metric (`db_up`, `redis_up`, the 503s) would be lost exactly during the outage they describe. Gauges read from the
   * database go through `gaugesFrom`, which leaves them out of a scrape that cannot read them (no old value shown as
   * current).
   */
  gauge(name: string, help: string, collect: () => number | Promise<number>): Gauge {
    return new Gauge({
      name,
      help,
      registers: [this.registry],
      async collect() {
        try {
          this.set(await collect());
        } catch {
          // The last value stays; `db_up` says when the database does not answer.
        }
      },
    });
  }

  /**
   * Gauges read from one source (a database statement) when scraped: one read shared by the gauges of a scrape. A
   * read that fails leaves them out of that scrape (Prometheus marks their series stale: no old value is shown as
   * current) and sets `metrics_scrape_error{source}` to 1; the rest of the scrape (process, HTTP, pool, Redis) is
   * answered all the same. In the main registry, a failing gauge would fail the whole scrape (a 500).
   */
  gaugesFrom<T>(
    source: string,
    read: () => Promise<T>,
    gauges: Array<{ name: string; help: string; value: (read: T) => number }>,
  ): void {
    const registry = new Registry();
    let current: Promise<T> | null = null;
    const shared = () => (current ??= read().finally(() => (current = null)));
    for (const { name, help, value } of gauges) {
      new Gauge({
        name,
        help,
        registers: [registry],
        async collect() {
          this.set(value(await shared()));
        },
      });
    }
    this.scrapeErrors.set({ source }, 0);
    this.sources.push({ source, registry });
  }

  counter(name: string, help: string): Counter {
    return new Counter({ name, help, registers: [this.registry] });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The sources first (their outcome sets `metrics_scrape_error`), then the main registry. */
  async text(): Promise<string> {
    const sourced = await Promise.all(
      this.sources.map(async ({ source, registry }) => {
        try {
          const text = await registry.metrics();
          this.scrapeErrors.set({ source }, 0);
          return text;
        } catch {
          this.scrapeErrors.set({ source }, 1);
          return '';
        }
      }),
    );
    return (await this.registry.metrics()) + sourced.join('');
  }
}

/**
 * Observes every response once it is sent: its duration under the route template (never the raw
 * URL, whose ids would make a series per pet), and a 429 as a rate-limit rejection.
 */
export function registerHttpMetrics(fastify: FastifyInstance, metrics: Metrics): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    observeHttpAnswer(metrics, request.method, routeOf(request), reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

/** One answer in the HTTP metrics (also for what is answered before Fastify: admission's refusals). */
export function observeHttpAnswer(metrics: Metrics, method: string, route: string, status: number, seconds: number) {
  metrics.httpRequestDuration.observe({ method, route, status_code: String(status) }, seconds);
  if (status === 429) metrics.rateLimitRejections.inc();
}
