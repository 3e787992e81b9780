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

/**
 * Requests Node's HTTP parser rejects before any handler runs (malformed framing, a GET
 * with a chunked body, oversized headers) still get the Error shape, then the socket closes.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: import('node:net').Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const headersTooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  const status = headersTooLarge ? 431 : 400;
  const body = JSON.stringify({
    code: headersTooLarge ? 'headers_too_large' : 'bad_request',
    message: headersTooLarge ? 'The request headers are too large.' : 'The request is malformed HTTP.',
    status,
  });
  socket.end(
    `HTTP/1.1 ${status} ${headersTooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
      `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

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
 * the request id on every response and the JSON-only body rule.
 */
export function registerHttpHooks(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
    if (hasBody(request) && !JSON_MEDIA_TYPE.test(request.headers['content-type'] ?? '')) {
      throw new ApiError(400, 'missing_content_type', 'A request body must be sent with "Content-Type: application/json".');
    }
  });
}
