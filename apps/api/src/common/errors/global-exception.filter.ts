import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { toErrorResponse } from './error-response';

/** Turns every error raised inside NestJS (guards, pipes, controllers) into the Error shape. */
@Catch()
export class GlobalExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(error: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    sendError(error, http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>(), this.logger);
  }
}

/** Shared by the NestJS filter and Fastify's own error handler (body parsing happens before NestJS). */
export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply, logger: Logger): void {
  const { body, headers, unexpected } = toErrorResponse(error);
  if (unexpected) {
    logger.error(
      `Unexpected error on ${request.method} ${request.url} (request ${request.id})`,
      (error as Error)?.stack ?? String(error),
    );
  } else if (body.status === 503) {
    logger.warn(
      `Database unavailable on ${request.method} ${request.url} (request ${request.id}): ${(error as Error)?.message}`,
    );
  }
  if (reply.sent) return;
  // Also for errors raised before the hook that sets it runs (framework errors, early hooks).
  void reply.header('X-Request-Id', request.id);
  void reply.status(body.status).headers(headers).type('application/json; charset=utf-8').send(body);
}
