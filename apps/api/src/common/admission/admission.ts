import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { Counter, type Registry } from 'prom-client';
import { ConfigPart } from '../../config/app-config';
import { ApiError } from '../errors/api-error';
import { toErrorResponse } from '../errors/error-response';
import { markExpectedRefusal } from '../errors/expected-refusal';
import { API_RESPONSE_HEADERS } from '../http-kit/security-headers.hooks';
import { isHealthProbe } from '../http-kit/health-probes';
import { routeOf } from '../http-kit/route-label';
import { GradientLimit } from './gradient-limit';

const OVERLOADED = 'The service is overloaded: retry after Retry-After seconds (nothing was done).';
/** Seconds. The typed client adds jitter to it, so that the refused do not all come back in the same instant. */
const RETRY_AFTER_SECONDS = 1;

/**
 * The refusal, made once: its JSON text and headers (the Error shape through the one table, toErrorResponse, and the
 * security headers every API answer carries). Under overload an instance refuses about as many requests as it
 * serves, and every refusal's CPU is taken from the served ones (at twice capacity, goodput stays at 0.9 only if a
 * refusal costs under a tenth of a served request): no Error object (its stack trace), no error handler, no
 * serialisation, no other onRequest hook.
 */
const REFUSAL = (() => {
  const { body, headers } = toErrorResponse(ApiError.overloaded(OVERLOADED, RETRY_AFTER_SECONDS));
  return {
    json: JSON.stringify(body),
    headers: { ...API_RESPONSE_HEADERS, ...headers, 'content-type': 'application/json; charset=utf-8' },
  };
})();

/**
 * What admission needs of the process's metrics registry (`Metrics`, apps/api/src/metrics, is one): declared here so
 * that common/ imports no folder above it.
 */
export interface AdmissionMetrics {
  readonly registry: Registry;
  /** A gauge read when scraped. */
  gauge(name: string, help: string, collect: () => number | Promise<number>): unknown;
}

/** Routes never refused: an orchestrator, a scraper and a reader of the description must always be answered. */
const EXEMPT_ROUTES = new Set(['/metrics', '/openapi.json', '/openapi.yaml']);

/** Whether a request bypasses admission (by its route template; an unmatched URL is admitted like any other). */
export function isExemptFromAdmission(route: string | undefined): boolean {
  return route !== undefined && (isHealthProbe(route) || EXEMPT_ROUTES.has(route) || route.startsWith('/docs'));
}

/** Headers a refusal adds for its request (the CORS headers, the CORS hook running after admission), if any. */
export type RefusalHeaders = (request: FastifyRequest) => Record<string, string> | undefined;

/** When the response was admitted (performance.now()), kept on the Node response: no map, no closure per request. */
const ADMITTED_AT = Symbol('admittedAt');
type AdmittedResponse = ServerResponse & { [ADMITTED_AT]?: number };

/** A request waiting for a slot (only while the limit is reached: the hot path allocates none). */
interface Waiter {
  request: FastifyRequest;
  reply: FastifyReply;
  done: HookHandlerDoneFunction;
  deadline: number;
}

/**
 * Adaptive admission: at most `limit` requests in flight per instance, the limit following measured latency
 * (GradientLimit, Gradient2); a request over it waits in a short FIFO queue for at most `ADMISSION_QUEUE_MS`, else it
 * is answered 503 `overloaded` with `Retry-After` at once: before authentication, so a refusal costs no database
 * query and no key verification. Health probes, /metrics, /openapi.json, /docs and OPTIONS are never counted nor
 * refused. A refusal carries the CORS headers an allowed origin would get (`refusalHeaders`).
 *
 * Reads are preferred in the queue only: a write (any method but GET and HEAD) may queue while the queue is less than
 * half full, a read until it is full; both count alike against the limit, and the queue is served in arrival order.
 *
 * The first `onRequest` hook (assembly/pipeline.ts): a refused request runs no other hook before its answer, and a
 * queued one, admitted later from another request's 'close', runs the rest of the pipeline (its WorkScope first) in
 * a context of its own, not in that request's.
 *
 * Hand-written. `@fastify/under-pressure` (the maintained Fastify plugin) sheds on event-loop delay, heap, RSS and
 * event-loop utilisation: this service's overload is requests waiting for database connections while the event loop
 * idles, which those never see, and it has no concurrency limit, no queue and no exemption by route. No maintained
 * npm package implements an adaptive concurrency limit (Netflix's concurrency-limits is Java; the npm "concurrency
 * limit" packages are fixed-size promise pools): the algorithm is 60 lines (gradient-limit.ts).
 *
 * Callback-style hook, no promise: below the limit a request costs a comparison, a counter, a timestamp on its
 * response and one shared 'close' listener (which also counts a client that went away).
 */
export class Admission {
  readonly limiter: GradientLimit;
  private inFlightCount = 0;
  private readonly queue: Waiter[] = [];
  private timer: NodeJS.Timeout | null = null;
  private readonly shedTotal: Counter<'route'>;
  /** One listener for every admitted response: `this` is the Node response. */
  private readonly onClose: (this: AdmittedResponse) => void;

  constructor(
    private readonly settings: ConfigPart<'admission'>,
    metrics: AdmissionMetrics,
    private readonly refusalHeaders?: RefusalHeaders,
  ) {
    this.limiter = new GradientLimit({ min: settings.limitMin, max: settings.limitMax });
    metrics.gauge('admission_limit', 'Requests this instance admits in flight now (the adaptive limit).', () =>
      settings.mode === 'on' ? this.limiter.limit : 0,
    );
    metrics.gauge(
      'admission_in_flight',
      'Admitted requests in flight (health probes and /metrics not counted).',
      () => this.inFlightCount,
    );
    metrics.gauge(
      'admission_queued',
      'Requests waiting for a slot under the admission limit.',
      () => this.queue.length,
    );
    this.shedTotal = new Counter({
      name: 'admission_shed_total',
      help: 'Requests refused with 503 overloaded by the admission limit, by route template.',
      labelNames: ['route'] as const,
      registers: [metrics.registry],
    });
    const release = (response: AdmittedResponse) => this.release(response);
    this.onClose = function (this: AdmittedResponse) {
      release(this);
    };
  }

  get inFlight(): number {
    return this.inFlightCount;
  }

  get queued(): number {
    return this.queue.length;
  }

  register(fastify: FastifyInstance): void {
    if (this.settings.mode === 'off') return;
    fastify.addHook('onRequest', (request, reply, done) => {
      // OPTIONS too: a hook answers it (a CORS preflight or the Allow list), never a handler, and a refused preflight
      // would hide the 503 of the request it precedes from the browser's script.
      if (request.method === 'OPTIONS' || isExemptFromAdmission(request.routeOptions.url)) return done();
      if (this.inFlightCount < this.limiter.limit && this.queue.length === 0) {
        this.admit(reply.raw);
        return done();
      }
      const size = this.settings.queueMs > 0 ? this.limiter.limit : 0;
      const method = request.method;
      const room = method === 'GET' || method === 'HEAD' ? size : size >> 1;
      if (this.queue.length >= room) return this.refuse(request, reply);
      this.queue.push({ request, reply, done, deadline: performance.now() + this.settings.queueMs });
      this.timer ??= setTimeout(() => this.expire(), this.settings.queueMs).unref();
    });
  }

  private admit(response: AdmittedResponse): void {
    this.inFlightCount++;
    response[ADMITTED_AT] = performance.now();
    response.on('close', this.onClose);
  }

  private release(response: AdmittedResponse): void {
    const admittedAt = response[ADMITTED_AT];
    if (admittedAt === undefined) return;
    response[ADMITTED_AT] = undefined;
    this.limiter.onSample(performance.now() - admittedAt, this.inFlightCount);
    this.inFlightCount--;
    this.serveQueue();
  }

  /** Admits waiting requests, oldest first, while there is room (one that waited too long, or went away, is shed). */
  private serveQueue(): void {
    const now = performance.now();
    while (this.queue.length && this.inFlightCount < this.limiter.limit) {
      const waiter = this.queue.shift() as Waiter;
      if (waiter.deadline <= now || waiter.request.raw.destroyed) {
        this.refuse(waiter.request, waiter.reply);
      } else {
        this.admit(waiter.reply.raw);
        waiter.done();
      }
    }
  }

  /** The timer of the oldest waiter: sheds those whose wait is over, then waits for the next one's deadline. */
  private expire(): void {
    this.timer = null;
    const now = performance.now();
    while (this.queue.length && this.queue[0].deadline <= now) {
      const waiter = this.queue.shift() as Waiter;
      this.refuse(waiter.request, waiter.reply);
    }
    if (this.queue.length) {
      this.timer = setTimeout(() => this.expire(), Math.max(1, this.queue[0].deadline - now)).unref();
    }
  }

  /**
   * Answers 503 `overloaded` from the hook (the hook's `done` is never called: Fastify runs no later `onRequest`
   * hook, then the `onSend` and `onResponse` ones: the access line, at info, and the HTTP metrics).
   */
  private refuse(request: FastifyRequest, reply: FastifyReply): void {
    this.shedTotal.inc({ route: routeOf(request) });
    markExpectedRefusal(request);
    const extra = this.refusalHeaders?.(request);
    if (extra) void reply.headers(extra);
    void reply.code(503).headers(REFUSAL.headers).header('X-Request-Id', request.id).send(REFUSAL.json);
  }
}
