import type { FastifyInstance } from 'fastify';
import { Logger } from '@nestjs/common';
import { ApiError } from '../errors/api-error';
import { sendError } from '../errors/global-exception.filter';

const timeoutLogger = new Logger('Errors');

/**
 * A request not answered within `ms` gets 503 `service_unavailable` (the work behind it goes on,
 * bounded by the database timeouts, and its late answer is dropped). Hand-written rather than
 * Fastify's `handlerTimeout`: in Fastify 5.11 that timer is cleared as soon as a request body has
 * been read (fastify/fastify#6725), so it never fires for POST, PUT or PATCH. The response's
 * `close` event, used here, fires only once the response is sent or the connection is gone.
 */
export function registerHandlerTimeout(fastify: FastifyInstance, ms: number): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    const timer = setTimeout(() => {
      if (reply.sent) return;
      const error = ApiError.serviceUnavailable('The request took too long; try again shortly.', 5);
      sendError(error, request, reply, timeoutLogger);
    }, ms);
    reply.raw.once('close', () => clearTimeout(timer));
    done();
  });
}
