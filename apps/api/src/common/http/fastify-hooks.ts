import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error';
import { sendError } from '../errors/global-exception.filter';

export const BODY_LIMIT_BYTES = 64 * 1024;

/** A client's X-Request-Id is kept when it is short and plain; otherwise a new one is made. */
export function requestId(request: { headers: Record<string, string | string[] | undefined> }): string {
  const sent = request.headers['x-request-id'];
  return typeof sent === 'string' && /^[A-Za-z0-9._:-]{1,128}$/.test(sent) ? sent : randomUUID();
}

/** What Node's HTTP server answers itself, before Fastify sees a request, by its error code. */
const CLIENT_ERRORS: Record<string, { status: number; reason: string; code: string; message: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    reason: 'Request Header Fields Too Large',
    code: 'headers_too_large',
    message: 'The request headers are too large.',
  },
  // requestTimeout and headersTimeout: the client did not send its request in time.
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    reason: 'Request Timeout',
    code: 'request_timeout',
    message: 'The request was not received in time.',
  },
};
const MALFORMED = {
  status: 400,
  reason: 'Bad Request',
  code: 'bad_request',
  message: 'The request is malformed HTTP.',
};

/**
 * Requests Node's HTTP parser rejects before any handler runs (malformed framing, a GET
 * with a chunked body, an unknown method, oversized headers) or that are not received in
 * time still get the Error shape and a request id, then the socket closes.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: import('node:net').Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const { status, reason, code, message } = CLIENT_ERRORS[error.code ?? ''] ?? MALFORMED;
  const body = JSON.stringify({ code, message, status });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${randomUUID()}\r\n` +
      `Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * Fastify's `frameworkErrors`: what its router answers by itself (a URL that is not valid
 * percent-encoding, an over-long path parameter) goes through the Error shape too. No hook
 * has run for such a request, so the request id is set here (sendError does it).
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  sendError(error, request, reply, frameworkLogger);
}
const frameworkLogger = new Logger('Errors');

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * NestJS installs Fastify's error handler and turns Fastify's own errors (invalid
 * JSON, body too large) into bare HttpExceptions, losing their codes. This adapter
 * answers those errors itself, in the Error shape, and hands everything else on.
 */
export class PetstoreFastifyAdapter extends FastifyAdapter {
  private readonly errorLogger = new Logger('Errors');

  override setErrorHandler(handler: Parameters<FastifyAdapter['setErrorHandler']>[0]) {
    return super.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
      const code = (error as Partial<FastifyError> | null)?.code;
      if ((typeof code === 'string' && code.startsWith('FST_')) || error instanceof ApiError) {
        return sendError(error, request, reply, this.errorLogger);
      }
      return (handler as (e: unknown, q: FastifyRequest, r: FastifyReply) => unknown)(error, request, reply);
    });
  }
}

/**
 * Hooks on the Fastify instance, for what happens before NestJS sees a request:
 * the request id on every response and the JSON-only body rule. Callback-style (a thrown error is
 * handled like a rejection) rather than async: no promise per request.
 */
export function registerHttpHooks(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    if (hasBody(request) && !JSON_MEDIA_TYPE.test(request.headers['content-type'] ?? '')) {
      throw new ApiError(
        400,
        'missing_content_type',
        'A request body must be sent with "Content-Type: application/json".',
      );
    }
    done();
  });
}

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
      const error = new ApiError(
        503,
        'service_unavailable',
        'The request took too long; try again shortly.',
        undefined,
        {
          'Retry-After': '5',
        },
      );
      sendError(error, request, reply, frameworkLogger);
    }, ms);
    reply.raw.once('close', () => clearTimeout(timer));
    done();
  });
}
