import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { routeOf } from '../http-kit/route-label';
import { ApiError } from './api-error';
import { markExpectedRefusal } from './expected-refusal';
import { ErrorBody, toErrorResponse } from './error-response';

/** Turns every error raised inside NestJS (guards, pipes, controllers) into the Error shape. */
@Catch()
export class GlobalExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(error: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    sendError(error, http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>(), this.logger);
  }
}

/**
 * Shared by the NestJS filter and Fastify's own error handler (body parsing happens before NestJS). Log lines name
 * the request by method and route template (`/pets/:petId`), never its URL: ids and query strings stay out of logs.
 */
export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply, logger: Logger): void {
  const { body, headers, unexpected } = toErrorResponse(error);
  if (error instanceof ApiError && error.expected) {
    markExpectedRefusal(request); // its access line alone says it, at info
  } else if (unexpected) {
    logger.error(`Unexpected error on ${requestLabel(request)}`, (error as Error)?.stack ?? String(error));
  } else if (body.status === 503 && !reply.sent) {
    // An ApiError's 503 is the HTTP layer's own "not now" (drain, readiness); the others come from the store. A
    // request answered already was cut off (handler timeout, shutdown), which logged it: its work's failure is that.
    const what = error instanceof ApiError ? 'Service unavailable' : 'Database unavailable';
    logger.warn(`${what} on ${requestLabel(request)}: ${(error as Error)?.message}`);
  }
  writeError(body, headers, request, reply);
}

const SUCCESS_ONLY_HEADERS = ['location', 'idempotent-replayed'];

/** Sends an error answer as it is, logging nothing (for callers that log what happened themselves). */
export function writeError(
  body: ErrorBody,
  headers: Record<string, string>,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  if (reply.sent) return;
  // What a handler sets for its success before the work is over (an order's Location, ahead of its COMMIT).
  for (const header of SUCCESS_ONLY_HEADERS) if (reply.hasHeader(header)) void reply.removeHeader(header);
  // Also for errors raised before the hook that sets it runs (framework errors, early hooks).
  void reply.header('X-Request-Id', request.id);
  void reply.status(body.status).headers(headers).type('application/json; charset=utf-8').send(body);
}

/** `POST /pets/:petId (request <id>)`: how error lines name a request. */
export function requestLabel(request: FastifyRequest): string {
  return `${request.method} ${routeOf(request)} (request ${request.id})`;
}
