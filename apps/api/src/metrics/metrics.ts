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

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    this.buildInfo.set({ version: RELEASE.version, commit: RELEASE.commit, node_version: process.version }, 1);
  }

  /**
   * A gauge read when scraped: `collect` returns its value. One that fails (the queue gauges read the database)
   * keeps its last value: prom-client would otherwise fail the whole scrape, and every other metric (`db_up`,
   * `redis_up`, the 503s) would be lost exactly during the outage they describe.
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

  counter(name: string, help: string): Counter {
    return new Counter({ name, help, registers: [this.registry] });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
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
