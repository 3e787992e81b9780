import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { Logger } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { API_RESPONSE_HEADERS } from '../http-kit/security-headers.hooks';
import { ApiError } from './api-error';
import type { PublicErrorCode } from './error-codes';
import { documentationUrlOf } from './error-docs';
import { sendError } from './global-exception.filter';

/*
 * What the framework answers by itself, before or beside Nest's filter: Node's HTTP parser, Fastify's router
 * and Fastify's own errors. Each answer in the Error shape.
 */

/** What Node's HTTP server answers itself, before Fastify sees a request, by its error code. */
const CLIENT_ERRORS: Record<string, { status: number; reason: string; code: PublicErrorCode; message: string }> = {
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
  code: 'bad_request' as const,
  message: 'The request is malformed HTTP.',
};

/**
 * Requests Node's HTTP parser rejects before any handler runs (malformed framing, a GET
 * with a chunked body, an unknown method, oversized headers) or that are not received in
 * time still get the Error shape and a request id, then the socket closes.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const { status, reason, code, message } = CLIENT_ERRORS[error.code ?? ''] ?? MALFORMED;
  const body = JSON.stringify({ code, message, status, documentationUrl: documentationUrlOf(code) });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${randomUUID()}\r\n` +
      `${SECURITY_HEADER_LINES}Connection: close\r\n\r\n${body}`,
  );
}

/** The security headers (and no-store) every answer carries, as header lines for the raw answers above. */
const SECURITY_HEADER_LINES = Object.entries(API_RESPONSE_HEADERS)
  .map(([name, value]) => `${name}: ${value}\r\n`)
  .join('');

/**
 * Fastify's `frameworkErrors`: what its router answers by itself (a URL that is not valid
 * percent-encoding, an over-long path parameter) goes through the Error shape too. No hook
 * has run for such a request, so the request id (sendError does it) and the security headers are set here.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  // No onRequest hook has run either: the security headers are set here.
  void reply.headers(API_RESPONSE_HEADERS);
  sendError(error, request, reply, frameworkLogger);
}
const frameworkLogger = new Logger('Errors');

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
