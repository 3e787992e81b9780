import { Injectable } from '@nestjs/common';
import { isHealthProbe } from '../http-kit/health-probes';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../errors/api-error';
import { cutOff } from '../http/handler-timeout';

const SHUTTING_DOWN = 'The service is shutting down: retry, another instance will answer.';

/**
 * How SHUTDOWN_TIMEOUT_MS is shared out, so that the process exits within it, as the configuration table says
 * (issue 50: 2000 exited after 4.3 s, the drain having had all of it and the closing 2.7 s more, waiting for the
 * cut-off requests' statements). The drain (and the jobs in progress) get `drainMs`; closing (the worker, the pool,
 * the embedded PostgreSQL) gets the rest; at `deadlineMs` whatever is still closing is given up on, only the
 * embedded PostgreSQL is still stopped (bounded by what is left), and the process exits by `timeoutMs`.
 * The closing share is a quarter, at most 2 s: an idle instance closes in about 0.2 s.
 */
export function shutdownShares(timeoutMs: number): { drainMs: number; deadlineMs: number } {
  const closingMs = Math.min(2_000, Math.round(timeoutMs / 4));
  return { drainMs: timeoutMs - closingMs, deadlineMs: timeoutMs - Math.round(closingMs / 2) };
}

/** The reply a connection is serving now (Node serves one request at a time per connection), on the socket itself. */
const SERVING = Symbol('servingReply');
type ServingSocket = Socket & { [SERVING]?: FastifyReply };

/**
 * The shutdown drain. On SIGTERM/SIGINT (main.ts) `drain()` starts it: `/health/ready` answers 503 at once,
 * so a load balancer stops sending; a new request other than a health probe gets 503 `service_unavailable`
 * with `Connection: close` (the client may retry on another instance); the requests already in flight
 * finish. It resolves when none is left, or when the deadline passes. The listener stays open meanwhile,
 * so that probes see the 503 rather than a refused connection.
 *
 * Hand-written: Fastify's own `return503OnClosing` applies only once the listener closes, and neither it nor
 * NestJS's shutdown hooks count the requests in flight or turn readiness off first.
 */
@Injectable()
export class Drain {
  private draining = false;
  /** When `drain()` was first called (Date.now()); null until then. */
  private startedAt: number | null = null;
  private refusedCount = 0;
  /** Requests in flight. */
  private inFlight = 0;
  /**
   * The open connections, each with the reply it is serving (`SERVING`): what `cutOff` answers at the deadline.
   * Not a Set of the replies themselves: an entry added and deleted per request cost a list read about 35 µs of CPU
   * (285 µs a request against 250, and its p99 36 ms against 25, side by side at 50 connections), mostly in the
   * garbage collector; a connection is added once and serves thousands of requests.
   */
  private readonly connections = new Set<ServingSocket>();
  private readonly waiting = new Set<() => void>();

  get isDraining(): boolean {
    return this.draining;
  }

  /** Requests refused with 503 since the drain started (health probes not counted). */
  get refused(): number {
    return this.refusedCount;
  }

  /** What is left of `timeoutMs` counted from the start of the drain (all of it before the drain starts). */
  timeLeft(timeoutMs: number): number {
    return this.startedAt === null ? timeoutMs : Math.max(0, timeoutMs - (Date.now() - this.startedAt));
  }

  /** Counts requests in flight and refuses new ones (but health probes) once draining. */
  register(fastify: FastifyInstance): void {
    // Callback-style (a thrown error is handled like a rejection): no promise per request.
    fastify.server.on('connection', (socket: ServingSocket) => {
      this.connections.add(socket);
      socket.once('close', () => this.connections.delete(socket));
    });
    fastify.addHook('onRequest', (request, reply, done) => {
      if (this.draining && !isHealthProbe(request.url)) {
        this.refusedCount++;
        reply.header('Connection', 'close');
        // Expected: its access line (info) is all the log says of it; `refused` sums them up at the end.
        throw ApiError.shuttingDown(SHUTTING_DOWN, 1);
      }
      this.inFlight++;
      const socket = request.raw.socket as ServingSocket;
      socket[SERVING] = reply;
      // 'close' comes once per response, whether it was sent in full or the client went away.
      reply.raw.once('close', () => {
        this.inFlight--;
        if (socket[SERVING] === reply) socket[SERVING] = undefined;
        if (this.inFlight === 0) for (const resolve of this.waiting) resolve();
      });
      done();
    });
  }

  /** Starts draining; resolves `true` once no request is in flight, `false` if `timeoutMs` passes first. */
  async drain(timeoutMs: number): Promise<boolean> {
    this.draining = true;
    this.startedAt ??= Date.now();
    if (this.inFlight === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    let onIdle: (() => void) | undefined;
    try {
      return await new Promise<boolean>((resolve) => {
        onIdle = () => resolve(true);
        this.waiting.add(onIdle);
        timer = setTimeout(() => resolve(false), timeoutMs);
      });
    } finally {
      clearTimeout(timer);
      if (onIdle) this.waiting.delete(onIdle);
    }
  }

  /**
   * At the deadline, after `drain` resolved `false`: each request still in flight is cut off (handler-timeout.ts,
   * `cutOff`): its transaction does not commit from now on, and it is answered 503 with `Connection: close`, which
   * writes its access line. Resolves once those answers are written (at most `waitMs`), before the caller closes
   * the connections.
   */
  async cutOff(waitMs = 500): Promise<number> {
    const replies = [...this.connections].flatMap((socket) => socket[SERVING] ?? []);
    for (const reply of replies) {
      void reply.header('Connection', 'close');
      cutOff(reply.request, reply, 'shutting down: SHUTDOWN_TIMEOUT_MS passed', 1);
    }
    if (replies.length) await this.drain(waitMs);
    return replies.length;
  }
}
