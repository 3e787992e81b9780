import type { FastifyInstance } from 'fastify';
import { Logger } from '@nestjs/common';
import { ApiError } from '../errors/api-error';
import { requestLabel, writeError } from '../errors/global-exception.filter';
import { toErrorResponse } from '../errors/error-response';

const timeoutLogger = new Logger('Timeouts');

/**
 * A request not answered within `ms` gets 503 `service_unavailable` (the work behind it goes on,
 * bounded by the database timeouts, and its late answer is dropped). Hand-written rather than
 * Fastify's `handlerTimeout`: in Fastify 5.11 that timer is cleared as soon as a request body has
 * been read (fastify/fastify#6725), so it never fires for POST, PUT or PATCH. The response's
 * `close` event, used here, fires only once the response is sent or the connection is gone.
 *
 * A request whose body is still arriving then has not reached its handler at all: the client is late, not the
 * service. It gets 408 `request_timeout` (what Node answers at `HTTP_REQUEST_TIMEOUT_MS`, which with the same
 * value would come up to a second after this timer, Node checking once a second) and the connection is closed,
 * the rest of the body unread; the log line says so, at info (a slow client is no alert).
 */
export function registerHandlerTimeout(fastify: FastifyInstance, ms: number): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    const timer = setTimeout(() => {
      if (reply.sent) return;
      if (!request.raw.complete) {
        timeoutLogger.log(`Request body not received within ${ms} ms on ${requestLabel(request)}: 408`);
        void reply.header('Connection', 'close');
        const late = new ApiError(408, 'request_timeout', 'The request body was not received in time.');
        const { body, headers } = toErrorResponse(late);
        writeError(body, headers, request, reply);
        return;
      }
      timeoutLogger.warn(`Handler timeout on ${requestLabel(request)}: not answered within ${ms} ms, 503`);
      const { body, headers } = toErrorResponse(
        ApiError.serviceUnavailable('The request took too long; try again shortly.', 5),
      );
      writeError(body, headers, request, reply);
    }, ms);
    reply.raw.once('close', () => clearTimeout(timer));
    done();
  });
}
