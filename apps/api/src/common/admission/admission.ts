import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { Counter, type Registry } from 'prom-client';
import { ConfigPart } from '../../config/app-config';
import { ApiError } from '../errors/api-error';
import { toErrorResponse } from '../errors/error-response';
import { announcesBody } from '../http-kit/body-limit';
import { API_RESPONSE_HEADERS } from '../http-kit/security-headers.hooks';
import { isHealthProbe } from '../http-kit/health-probes';
import { UNMATCHED_ROUTE } from '../http-kit/route-label';
import { GradientLimit } from './gradient-limit';
import { LoopGovernor } from './loop-governor';

const OVERLOADED = 'The service is overloaded: retry after Retry-After seconds (nothing was done).';
/** Seconds. The typed client adds jitter to it, so that the refused do not all come back in the same instant. */
const RETRY_AFTER_SECONDS = 1;

/**
 * The refusal, made once: its JSON text and headers (the Error shape through the one table, toErrorResponse, and the
 * security headers every API answer carries). Under overload an instance refuses about as many requests as it
 * serves, and every refusal's CPU is taken from the served ones (at twice capacity, goodput stays at 0.9 only if a
 * refusal costs under a tenth of a served request): no Error object (its stack trace), no error handler, no
 * serialisation, no Fastify request at all (`front`).
 */
const REFUSAL = (() => {
  const { body, headers } = toErrorResponse(ApiError.overloaded(OVERLOADED, RETRY_AFTER_SECONDS));
  const json = JSON.stringify(body);
  return {
    json,
    headers: {
      ...API_RESPONSE_HEADERS,
      ...headers,
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(json)),
    },
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

/** Whether a path bypasses admission (the exempt routes are static: their path is their template). */
export function isExemptFromAdmission(route: string | undefined): boolean {
  return route !== undefined && (isHealthProbe(route) || EXEMPT_ROUTES.has(route) || route.startsWith('/docs'));
}

/** What a refusal needs of the rest of the app, given by the pipeline: admission imports no folder beside it. */
export interface AdmissionOptions {
  /** The request id a refusal carries: the one Fastify would have given the request (create-app.ts, `genReqId`). */
  requestId(request: IncomingMessage): string;
  /** Headers a refusal adds for its request, if any (the CORS headers of an allowed origin). */
  refusalHeaders?(request: IncomingMessage): Record<string, string> | undefined;
  /** What the access log and the HTTP metrics keep of a refusal (Fastify's onResponse hooks never see it). */
  onRefused?(refusal: Refusal): void;
  /**
   * Who sends a request, without waiting for anything (clients.ts: the account of a key verified recently, else the
   * client's address); default: the socket's address. Asked only once half the limit is in flight.
   */
  clientOf?(request: IncomingMessage): Client;
  /** What the loop governor reads each window; default: the process's own (`ProcessLoad`). Tests give their own. */
  load?: LoadSignals;
}

/** The thread's load over a window: what the loop governor weighs (loop-governor.ts). */
export interface LoadWindow {
  /** The loop's delay (ms, p90 of the window's samples). */
  delayMs: number;
  /** Event-loop utilisation (0-1). */
  busy: number;
  /** The process's CPU time over the window's wall time (0-1, more with helper threads). */
  cpu: number;
}

/** A source of load windows: `start` begins the first, each `read` ends one and begins the next, `stop` ends it. */
export interface LoadSignals {
  start(): void;
  read(): LoadWindow;
  stop(): void;
}

/** The process's own signals: the loop's delay, its utilisation, and the process's CPU time. */
class ProcessLoad implements LoadSignals {
  /** The loop's delay, measured only while the governor runs (while requests are refused or queued, and after). */
  private readonly loopDelay = monitorEventLoopDelay({ resolution: 5 });
  private utilisation = performance.eventLoopUtilization();
  private cpu = process.cpuUsage();
  private since = performance.now();

  start(): void {
    this.loopDelay.reset();
    this.loopDelay.enable();
    this.utilisation = performance.eventLoopUtilization();
    this.cpu = process.cpuUsage();
    this.since = performance.now();
  }

  read(): LoadWindow {
    // p90 of the window's samples (about twenty): one garbage collection does not cut the cap, a saturated loop does.
    const delayMs = this.loopDelay.count > 0 ? this.loopDelay.percentile(90) / 1e6 : 0;
    this.loopDelay.reset();
    const utilisation = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(utilisation, this.utilisation).utilization;
    this.utilisation = utilisation;
    const cpu = process.cpuUsage(this.cpu);
    this.cpu = process.cpuUsage();
    const now = performance.now();
    const share = (cpu.user + cpu.system) / 1000 / Math.max(1, now - this.since);
    this.since = now;
    return { delayMs, busy, cpu: share };
  }

  stop(): void {
    this.loopDelay.disable();
  }
}

/** Whom a request's share is counted against: `account:<id>` or `ip:<address>`, and whether it is an administrator. */
export interface Client {
  key: string;
  admin: boolean;
}

/** A refused request, as the access line has it. */
export interface Refusal {
  requestId: string;
  method: string;
  route: string;
  status: 503;
  durationMs: number;
}

/** The loop governor's window (ms): about twenty delay samples (5 ms apart), a reaction well within a second. */
const GOVERNOR_WINDOW_MS = 100;

/** When the response was admitted (performance.now()), kept on the Node response: no map, no closure per request. */
const ADMITTED_AT = Symbol('admittedAt');
/** The client an admitted response is counted against (only once half the limit is in flight). */
const CLIENT = Symbol('admissionClient');
type AdmittedResponse = ServerResponse & { [ADMITTED_AT]?: number; [CLIENT]?: string };
/** A request with a body, let into Fastify without a slot: it takes one once its body has arrived (watchRoutes). */
const AFTER_BODY = Symbol('admittedAfterBody');
type BodyRequest = IncomingMessage & { [AFTER_BODY]?: boolean };

/** Requests an administrator may have admitted beyond the limit (never starved; the rate limit still counts them). */
const ADMIN_HEADROOM = 8;

/**
 * How a request goes on once admitted: `next`, the Fastify listener (admitted in front of Fastify), or `done`, the
 * preValidation hook's callback (a request with a body, admitted once its body has arrived).
 */
type Resume = { next: RequestListener; done?: undefined } | { next?: undefined; done: (error?: Error) => void };

/** A request waiting for a slot (only while the limit is reached: the hot path allocates none). */
interface Waiter {
  request: IncomingMessage;
  response: ServerResponse;
  resume: Resume;
  client: string;
  arrived: number;
  deadline: number;
}

/** The path of a request's URL (no query string): what the exemptions and the route table are matched on. */
function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/**
 * Adaptive admission: at most `limit` requests in flight per instance, the limit following measured latency
 * (GradientLimit, Gradient2) and, while requests are refused or queued, the thread's own load (LoopGovernor: the
 * event loop's delay and utilisation, which cap it lower when the thread cannot keep up); a request over it waits in
 * a short queue for at most `ADMISSION_QUEUE_MS`, else it is answered 503 `overloaded` with `Retry-After` at once:
 * before authentication (a request without a body), so a refusal costs no database query and no key verification (the
 * key cache is asked who sends it, `clientOf`, nothing more). Health probes,
 * /metrics, /openapi.json, /docs and OPTIONS are never counted nor refused. A refusal carries the CORS headers an
 * allowed origin would get (`refusalHeaders`).
 *
 * Reads are preferred in the queue only: a write (any method but GET and HEAD) may queue while the queue is less than
 * half full, a read until it is full; both count alike against the limit, and the queue is served in arrival order
 * (among the waiters of clients within their share, first: below).
 *
 * In front of Fastify (the server's request listener, FrontDoor): a refused request costs Node's HTTP parsing and one
 * write, no Fastify request, reply or hook (through Fastify's hooks a refusal took about 120 µs of CPU against 85 here,
 * taken from the requests being served; profiled later on a faster host, `refuse` took about 18 µs, 14 of them in the
 * socket write, and a whole refusal with Node's parsing about 40). A queued one, admitted later from another
 * request's 'close', enters Fastify from there and its hooks give it a context of its own (the access log's
 * WorkScope, first). The route of a refusal (its metric label and access line) comes from a copy of the routes, made
 * as Fastify adds them (`watchRoutes`).
 *
 * Hand-written. `@fastify/under-pressure` (the maintained Fastify plugin) sheds on event-loop delay, heap, RSS and
 * event-loop utilisation: it refuses every request while a threshold is crossed (on or off, no concurrency limit, no
 * queue, no exemption by route), and it does not see requests waiting for database connections while the event loop
 * idles. The loop governor reads the same two loop signals to set a cap instead. No maintained npm package implements
 * an adaptive concurrency limit (Netflix's concurrency-limits is Java; the npm "concurrency limit" packages are
 * fixed-size promise pools): the algorithm is 60 lines (gradient-limit.ts).
 *
 * **Fair shares** (issue 48; Netflix concurrency-limits' partitioned limiter, Stripe's concurrent-request limiter).
 * Once half the limit is in flight, each request is counted against its client (`clientOf`: the account of a key the
 * key cache verified recently, else the address, with TRUST_PROXY): while requests wait or are refused, a client with
 * its share of the limit (the limit over the clients with requests in flight or waiting) in flight or waiting is
 * refused at once, before the others queue; a full queue makes room for another client by refusing the newest waiter
 * of the client furthest over its share. A client alone may use the whole limit. An administrator is admitted at once
 * up to `ADMIN_HEADROOM` beyond the limit. Under pressure a flood is what is refused, the rest served. Hand-written
 * like the limit itself: no maintained npm package partitions a concurrency limit by client (`@fastify/rate-limit`
 * counts requests a window, not requests in flight, and runs as a Fastify hook; the pools are fixed and unkeyed).
 *
 * **Bodies** (issue 48, slow uploads): a request announcing a body is let into Fastify without a slot and takes one
 * once its body has arrived (watchRoutes' preValidation hook: the same limit, queue and shares), so a body that
 * trickles holds none (the slow-upload rule, common/http/body-rate.ts, cuts it); while the instance refuses, one from a
 * client over its share is refused at once, its body unread.
 *
 * Below half the limit a request costs a comparison, a counter, a timestamp on its response and one shared 'close'
 * listener (which also counts a client that went away); above it, `clientOf` too (a SHA-256 of the key and a map
 * lookup, about 4 µs measured on a busy 2-core host).
 */
export class Admission {
  readonly limiter: GradientLimit;
  readonly governor: LoopGovernor;
  private inFlightCount = 0;
  private readonly load: LoadSignals;
  private governorTimer: NodeJS.Timeout | null = null;
  /** Requests that arrived in the governor's window, and those of them refused or queued (its pressure). */
  private arrivals = 0;
  private pressedCount = 0;
  private readonly queue: Waiter[] = [];
  private timer: NodeJS.Timeout | null = null;
  private readonly shedTotal: Counter<'route'>;
  /** A copy of Fastify's routes, for the route of a refusal (watchRoutes). */
  private readonly routes = FindMyWay();
  /** One listener for every admitted response: `this` is the Node response. */
  private readonly onClose: (this: AdmittedResponse) => void;
  /** Requests in flight or waiting per client (those counted: from half the limit on); a client at 0 is removed. */
  private readonly clients = new Map<string, number>();
  private readonly clientOf: (request: IncomingMessage) => Client;

  constructor(
    private readonly settings: ConfigPart<'admission'>,
    metrics: AdmissionMetrics,
    private readonly options: AdmissionOptions,
  ) {
    this.limiter = new GradientLimit({ min: settings.limitMin, max: settings.limitMax });
    this.governor = new LoopGovernor(settings.loopDelayMs);
    this.load = options.load ?? new ProcessLoad();
    this.clientOf = options.clientOf ?? ((request) => ({ key: `ip:${request.socket.remoteAddress}`, admin: false }));
    metrics.gauge('admission_limit', 'Requests this instance admits in flight now (the adaptive limit).', () =>
      settings.mode === 'on' ? this.limit : 0,
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
    metrics.gauge(
      'admission_clients',
      'Clients (accounts, addresses) with requests counted in flight or waiting: the limit is shared among them.',
      () => this.clients.size,
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

  /** The requests admitted in flight now: the latency gradient's limit, or the loop governor's cap if lower. */
  get limit(): number {
    return Math.min(this.limiter.limit, this.governor.cap);
  }

  get inFlight(): number {
    return this.inFlightCount;
  }

  get queued(): number {
    return this.queue.length;
  }

  /**
   * Copies each route Fastify adds into the table refusals are labelled from, and admits the requests with a body once
   * it has arrived (a preValidation hook: after the body is parsed, before any other preValidation hook). Call before
   * the routes are added. find-my-way is Fastify's own router, with Fastify's defaults: a request gets the label
   * Fastify would give it.
   */
  watchRoutes(fastify: FastifyInstance): void {
    fastify.addHook('onRoute', (route) => {
      for (const method of ([] as string[]).concat(route.method)) {
        if (!this.routes.hasRoute(method as HTTPMethod, route.url)) {
          this.routes.on(method as HTTPMethod, route.url, () => undefined, { route: route.url });
        }
      }
    });
    if (this.settings.mode === 'off') return;
    fastify.addHook('preValidation', (request, reply, done) => {
      const raw = request.raw as BodyRequest;
      if (!raw[AFTER_BODY]) return done();
      raw[AFTER_BODY] = false;
      this.arrive(raw, reply.raw, { done });
    });
  }

  /** The request listener in front of `next` (Fastify's): FrontDoor installs it. */
  front(next: RequestListener): RequestListener {
    if (this.settings.mode === 'off') return next;
    const resume: Resume = { next };
    return (request, response) => {
      const method = request.method ?? 'GET';
      // OPTIONS too: a hook answers it (a CORS preflight or the Allow list), never a handler, and a refused preflight
      // would hide the 503 of the request it precedes from the browser's script.
      if (method === 'OPTIONS' || isExemptFromAdmission(pathOf(request.url ?? '/'))) return next(request, response);
      if (announcesBody(request.headers)) {
        // Its slot is taken once its body has arrived (watchRoutes' preValidation hook). While the instance refuses,
        // one from a client over its share is refused now, its body unread.
        if (this.pressing() && this.overShare(this.clientOf(request).key)) {
          this.arrivals++;
          this.press();
          return this.refuse(request, response, performance.now());
        }
        (request as BodyRequest)[AFTER_BODY] = true;
        return next(request, response);
      }
      this.arrive(request, response, resume);
    };
  }

  /**
   * The server is closing: refuses the requests still waiting for a slot at once (503 `overloaded`, as their deadline
   * would have, rather than when it comes, on a closing server) and stops the queue's timer, the governor's window and
   * its loop-delay histogram. The requests in flight finish as the drain lets them; admission keeps counting them.
   */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.governorTimer) clearInterval(this.governorTimer);
    this.governorTimer = null;
    this.load.stop();
    for (const waiter of this.queue.splice(0)) {
      if (waiter.request.destroyed) this.uncount(waiter.client);
      else this.shed(waiter);
    }
  }

  /** A request to admit now, queue, or refuse. */
  private arrive(request: IncomingMessage, response: AdmittedResponse, resume: Resume): void {
    this.arrivals++;
    if (this.inFlightCount < this.limit && this.queue.length === 0) {
      // From half the limit on, who sends it is counted: the shares need it once the limit is reached.
      if (this.inFlightCount >= this.limit >> 1) this.count((response[CLIENT] = this.clientOf(request).key));
      this.admit(response);
      return this.start(request, response, resume);
    }
    this.press();
    const now = performance.now();
    const client = this.clientOf(request);
    if (client.admin && this.inFlightCount < this.limit + ADMIN_HEADROOM) {
      this.count((response[CLIENT] = client.key));
      this.admit(response);
      return this.start(request, response, resume);
    }
    if (this.overShare(client.key)) return this.turnAway(request, response, resume, now);
    const size = this.settings.queueMs > 0 ? this.limit : 0;
    const method = request.method ?? 'GET';
    const room = method === 'GET' || method === 'HEAD' ? size : size >> 1;
    if (this.queue.length >= room) {
      // A write's half of the queue is taken while the queue has room: reads first, as without shares. A full queue
      // makes room by refusing the waiters of clients over their share, if any.
      if (this.queue.length < size) return this.turnAway(request, response, resume, now);
      while (this.queue.length >= room) {
        if (!this.makeRoom(client.key)) return this.turnAway(request, response, resume, now);
      }
    }
    this.count(client.key);
    this.queue.push({
      request,
      response,
      resume,
      client: client.key,
      arrived: now,
      deadline: now + this.settings.queueMs,
    });
    this.timer ??= setTimeout(() => this.expire(), this.settings.queueMs).unref();
  }

  private start(request: IncomingMessage, response: ServerResponse, resume: Resume): void {
    if (resume.next) resume.next(request, response);
    else resume.done();
  }

  /** Requests are waiting for a slot, or every slot is taken: the shares apply. */
  private pressing(): boolean {
    return this.queue.length > 0 || this.inFlightCount >= this.limit;
  }

  /** A client's share of the limit: the limit over the clients counted now and `arriving`, at least one. */
  private share(arriving: string): number {
    const active = this.clients.has(arriving) ? this.clients.size : this.clients.size + 1;
    return Math.max(1, Math.floor(this.limit / active));
  }

  /**
   * Whether a client has its share of the limit in flight or waiting while others have requests too (`arriving`: the
   * client of the request being decided, counted as one of them). A client alone is never over.
   */
  private overShare(client: string, arriving = client): boolean {
    if (this.clients.size < (this.clients.has(arriving) ? 2 : 1)) return false;
    return (this.clients.get(client) ?? 0) >= this.share(arriving);
  }

  /**
   * The queue is full: refuses the newest waiter of the client with the most requests counted, if that client is not
   * `client` and is over its share, so that `client` may wait. False if there is none to refuse.
   */
  private makeRoom(client: string): boolean {
    let heaviest: string | null = null;
    let most = 0;
    for (const waiter of this.queue) {
      const count = this.clients.get(waiter.client) ?? 0;
      if (waiter.client !== client && count > most) {
        heaviest = waiter.client;
        most = count;
      }
    }
    if (heaviest === null || !this.overShare(heaviest, client)) return false;
    for (let i = this.queue.length - 1; i >= 0; i--) {
      if (this.queue[i].client === heaviest) {
        this.shed(this.queue.splice(i, 1)[0]);
        return true;
      }
    }
    return false;
  }

  /** The next waiter to admit: the oldest of a client within its share (itself included), else the oldest. */
  private nextWaiter(): Waiter {
    for (let i = 0; i < this.queue.length; i++) {
      const client = this.queue[i].client;
      if ((this.clients.get(client) ?? 0) <= this.share(client)) return this.queue.splice(i, 1)[0];
    }
    return this.queue.shift() as Waiter;
  }

  private count(client: string): void {
    this.clients.set(client, (this.clients.get(client) ?? 0) + 1);
  }

  private uncount(client: string | undefined): void {
    if (client === undefined) return;
    const count = (this.clients.get(client) ?? 0) - 1;
    if (count > 0) this.clients.set(client, count);
    else this.clients.delete(client);
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
    this.uncount(response[CLIENT]);
    response[CLIENT] = undefined;
    this.limiter.onSample(performance.now() - admittedAt, this.inFlightCount);
    this.inFlightCount--;
    this.serveQueue();
  }

  /** Admits waiting requests, oldest first, while there is room (one that waited too long, or went away, is shed). */
  private serveQueue(): void {
    const now = performance.now();
    while (this.queue.length && this.inFlightCount < this.limit) {
      const waiter = this.nextWaiter();
      if (waiter.deadline <= now || waiter.request.destroyed) {
        this.shed(waiter);
      } else {
        (waiter.response as AdmittedResponse)[CLIENT] = waiter.client; // counted since it queued
        this.admit(waiter.response);
        this.start(waiter.request, waiter.response, waiter.resume);
      }
    }
  }

  /**
   * Demand is above the limit: the loop governor measures the loop's delay from now on, a window at a time, until its
   * cap has lifted and a window passes with nothing refused or queued (at normal load it costs nothing).
   */
  private press(): void {
    this.pressedCount++;
    if (this.governorTimer || this.settings.loopDelayMs <= 0) return;
    this.load.start();
    this.arrivals = 1;
    this.pressedCount = 1;
    this.governorTimer = setInterval(() => this.govern(), GOVERNOR_WINDOW_MS).unref();
  }

  private govern(): void {
    const { delayMs, busy, cpu } = this.load.read();
    // Pressure: the share of the window's arrivals refused or queued; a request still waiting counts as all of it.
    let pressure = this.arrivals > 0 ? this.pressedCount / this.arrivals : 0;
    if (this.queue.length > 0 && this.arrivals === 0) pressure = 1;
    this.arrivals = 0;
    this.pressedCount = 0;
    this.governor.onWindow(delayMs, busy, pressure, this.inFlightCount, this.limiter.limit, cpu);
    if (pressure === 0 && this.governor.cap === Infinity && this.governorTimer) {
      clearInterval(this.governorTimer);
      this.governorTimer = null;
      this.load.stop();
    }
  }

  /** The timer of the oldest waiter: sheds those whose wait is over, then waits for the next one's deadline. */
  private expire(): void {
    this.timer = null;
    const now = performance.now();
    while (this.queue.length && this.queue[0].deadline <= now) this.shed(this.queue.shift() as Waiter);
    if (this.queue.length) {
      this.timer = setTimeout(() => this.expire(), Math.max(1, this.queue[0].deadline - now)).unref();
    }
  }

  /** A waiter taken out of the queue unadmitted: refused. */
  private shed(waiter: Waiter): void {
    this.uncount(waiter.client);
    this.turnAway(waiter.request, waiter.response, waiter.resume, waiter.arrived);
  }

  /**
   * Refuses a request: in front of Fastify, from the ready-made body (`refuse`); in Fastify (a request whose body has
   * arrived), through its error handler, which writes the Error shape and the access line as for any answer.
   */
  private turnAway(request: IncomingMessage, response: ServerResponse, resume: Resume, arrived: number): void {
    if (resume.next) return this.refuse(request, response, arrived);
    this.shedTotal.inc({ route: this.routeOf(request.method ?? 'GET', request.url ?? '/') });
    resume.done(ApiError.overloaded(OVERLOADED, RETRY_AFTER_SECONDS));
  }

  /**
   * Answers 503 `overloaded` itself, from the ready-made body (Fastify never sees the request), then hands the access
   * log and the HTTP metrics what their onResponse hooks would have recorded (`onRefused`).
   */
  private refuse(request: IncomingMessage, response: ServerResponse, arrived: number): void {
    const method = request.method ?? 'GET';
    const route = this.routeOf(method, request.url ?? '/');
    this.shedTotal.inc({ route });
    const requestId = this.options.requestId(request);
    const extra = this.options.refusalHeaders?.(request);
    response.writeHead(503, { ...REFUSAL.headers, ...extra, 'x-request-id': requestId });
    response.end(REFUSAL.json);
    const durationMs = Math.round((performance.now() - arrived) * 10) / 10;
    this.options.onRefused?.({ requestId, method, route, status: 503, durationMs });
  }

  /** The route template a request matches (what Fastify's routeOptions.url would be), else UNMATCHED_ROUTE. */
  private routeOf(method: string, url: string): string {
    try {
      const found = this.routes.find(method as HTTPMethod, pathOf(url));
      return (found?.store as { route?: string } | undefined)?.route ?? UNMATCHED_ROUTE;
    } catch {
      return UNMATCHED_ROUTE; // a URL the router cannot decode: Fastify would answer it 400, unmatched
    }
  }
}
