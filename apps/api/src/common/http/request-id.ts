import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

/** A client's X-Request-Id is kept when it is short and plain; otherwise a new one is made. */
export function requestId(request: { headers: Record<string, string | string[] | undefined> }): string {
  const sent = request.headers['x-request-id'];
  return typeof sent === 'string' && /^[A-Za-z0-9._:-]{1,128}$/.test(sent) ? sent : randomUUID();
}

/** Every response carries the request's id, whichever hook or handler answers (callback style: no promise). */
export function registerRequestIdHeader(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    done();
  });
}
