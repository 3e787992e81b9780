import { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error';
import { toErrorResponse } from '../errors/error-response';
import { requestLabel, writeError } from '../errors/global-exception.filter';
import { announcesBody } from '../http-kit/body-limit';

const logger = new Logger('Timeouts');

/** How often the bodies still arriving are checked (ms): a cut comes at most this late. */
const CHECK_EVERY_MS = 250;

export interface BodyRate {
  /** The time every body gets (ms, HTTP_BODY_TIMEOUT_MS). */
  timeoutMs: number;
  /** Bytes a second: each of them received adds 1/minRate s (HTTP_BODY_MIN_RATE); 0 = the rule is off. */
  minRate: number;
}

/** A request whose body is still arriving. */
interface Arriving {
  request: FastifyRequest;
  reply: FastifyReply;
  /** When its headers had arrived (ms, performance.now()). */
  since: number;
  /** The socket's bytes read by then: what came after is its body. */
  bytesBefore: number;
}

/**
 * The slow-upload rule: a request body that trickles is cut long before HTTP_REQUEST_TIMEOUT_MS, as Apache's
 * mod_reqtimeout does (`body=5,MinRate=500`): the body gets `timeoutMs`, and one more second for every `minRate`
 * bytes received; past that it is answered **408 `request_timeout`** with `Connection: close` (the rest unread, the
 * socket closed once the answer is written), or, if something was already written, the socket is closed. A body sent
 * at any usual speed (the largest, 64 KiB, in well under a second) never meets it; one byte a second is cut after about
 * `timeoutMs`.
 *
 * Such a request holds no admission slot while its body arrives (admission lets a request with a body in only once it
 * has arrived: common/admission), so what trickling costs the instance is a socket and its buffer, for seconds.
 *
 * Hand-written: Node has only `requestTimeout` (the whole request, 30 s here, checked once a second) and
 * `headersTimeout`; Fastify has no body timeout, and no maintained plugin enforces a minimum rate. One interval checks
 * every body still arriving (socket.bytesRead), while there are any: no timer per request.
 */
export function registerBodyRate(fastify: FastifyInstance, rule: BodyRate): void {
  if (rule.minRate <= 0) return;
  const arriving = new Set<Arriving>();
  let timer: NodeJS.Timeout | null = null;

  const check = (): void => {
    const now = performance.now();
    for (const entry of arriving) {
      const { request, reply } = entry;
      const socket = request.raw.socket;
      if (reply.sent || request.raw.complete || socket.destroyed) {
        arriving.delete(entry);
        continue;
      }
      const received = socket.bytesRead - entry.bytesBefore;
      const allowedMs = rule.timeoutMs + (received * 1000) / rule.minRate;
      if (now - entry.since <= allowedMs) continue;
      arriving.delete(entry);
      cut(request, reply, received, Math.round(now - entry.since));
    }
    if (arriving.size === 0 && timer) {
      clearInterval(timer);
      timer = null;
    }
  };

  const cut = (request: FastifyRequest, reply: FastifyReply, received: number, elapsedMs: number): void => {
    logger.log(
      `Request body too slow on ${requestLabel(request)}: ${received} bytes in ${elapsedMs} ms ` +
        `(under ${rule.minRate} bytes a second after ${rule.timeoutMs} ms): 408`,
    );
    if (reply.raw.headersSent) {
      request.raw.socket.destroy();
      return;
    }
    void reply.header('Connection', 'close');
    const slow = new ApiError(
      408,
      'request_timeout',
      `The request body arrived too slowly (under ${rule.minRate} bytes a second): send it all at once.`,
    );
    const { body, headers } = toErrorResponse(slow);
    writeError(body, headers, request, reply);
  };

  fastify.addHook('onRequest', (request, reply, done) => {
    const raw = request.raw;
    if (!raw.complete && announcesBody(raw.headers)) {
      arriving.add({ request, reply, since: performance.now(), bytesBefore: raw.socket.bytesRead });
      timer ??= setInterval(check, CHECK_EVERY_MS).unref();
    }
    done();
  });
  fastify.addHook('onClose', (_instance, done) => {
    if (timer) clearInterval(timer);
    timer = null;
    arriving.clear();
    done();
  });
}
