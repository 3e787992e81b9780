import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors/api-error';

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

/**
 * RFC 9112 §3.2: a server must answer 400 to an HTTP/1.1 request without exactly one Host. Node's HTTP server
 * does so itself, before any hook, with a bare 400 and no body; it is told not to (`requireHostHeader: false`,
 * create-app.ts) and the refusal is made here, in the Error shape with the request id and security headers.
 * (Node keeps only the first of several Host headers, so "exactly one" is Node's to judge.)
 */
export function registerHostRequired(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    if (request.headers.host === undefined && request.raw.httpVersion === '1.1') {
      void reply.header('Connection', 'close');
      throw new ApiError(400, 'bad_request', 'An HTTP/1.1 request must carry a Host header.');
    }
    done();
  });
}
