import { WorkScope } from '@petstore/application';
import type { LoggerService } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import { Logger as NestPinoLogger, PinoLogger } from 'nestjs-pino';
import pino, { DestinationStream, Logger, LoggerOptions } from 'pino';
import pretty from 'pino-pretty';
import { ConfigPart, LogLevelName } from '../../config/app-config';
import { routeOf } from '../http-kit/route-label';
import { isExpectedRefusal } from '../errors/expected-refusal';

export type RootLogger = Logger;

const PINO_LEVELS: Record<LogLevelName, pino.Level> = {
  error: 'error',
  warn: 'warn',
  info: 'info',
  debug: 'debug',
  verbose: 'trace',
};

/**
 * Secret-bearing fields, wherever a log call might put them: credentials in headers, and the API
 * keys that sign-up and key creation return. Request and response bodies are never logged at all.
 */
export const REDACTED_PATHS = [
  'authorization',
  'cookie',
  'headers.authorization',
  'headers.cookie',
  'headers["set-cookie"]',
  '*.headers.authorization',
  '*.headers.cookie',
  '*.headers["set-cookie"]',
  'apiKey',
  '*.apiKey',
  'key',
  '*.key',
  'body',
  '*.body',
];

/**
 * Adds `requestId` to a line logged inside a request (a line's own `requestId` wins; pino merges into the result):
 * the id of the request's WorkScope, entered by registerAccessLog.
 */
function requestIdMixin(): object {
  const requestId = WorkScope.current()?.requestId;
  return requestId === undefined ? {} : { requestId };
}

/**
 * The process's one logger: JSON lines (time, level, message, context; request id inside a request)
 * or, with LOG_FORMAT=pretty, pino-pretty's coloured lines. `destination` is for tests.
 */
export function createRootLogger(
  config: Pick<ConfigPart<'observability'>, 'logLevel' | 'logFormat'>,
  destination?: DestinationStream,
): RootLogger {
  const options: LoggerOptions = {
    level: PINO_LEVELS[config.logLevel],
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    base: { pid: process.pid },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    mixin: requestIdMixin,
  };
  if (destination) return pino(options, destination);
  if (config.logFormat === 'pretty') {
    const stream = pretty({ sync: true, singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
    return pino(options, stream);
  }
  // Asynchronous: a line is appended to a buffer and written by the next write of the stream, so lines logged
  // while one write is under way leave in one (at the default level, one write(2) per request cost the access
  // log a tenth of an order's throughput). Idle, a line is written at once. pino flushes the buffer
  // synchronously when the process exits (pino.destination registers that), so a crash's last lines are kept.
  return pino(options, pino.destination({ dest: 1, sync: false }));
}

/**
 * The access log's logger. Without redaction: its lines are built of fields that hold no secret, and walking
 * REDACTED_PATHS' wildcards cost 6 of the 8 µs a line took. Every other line keeps it.
 */
export function accessLogger(root: RootLogger): RootLogger {
  return root.child({}, { redact: [] });
}

/** A logger that logs nothing (the tests' `logger: false`). */
export function silentLogger(): RootLogger {
  return pino({ level: 'silent' });
}

/** The same logger behind Nest's LoggerService interface (framework logs, `new Logger(context)`). */
export function nestLogger(root: RootLogger): LoggerService {
  return new NestPinoLogger(new PinoLogger({ pinoHttp: { logger: root } }), {});
}

/**
 * Nest's logger while a process is composed: as `nestLogger`, but Nest's ExceptionHandler, which logs a failed
 * start with its stack before the failure reaches main.ts, logs at debug. main.ts writes the one line an
 * operator's pipeline reads; the stack stays visible with LOG_LEVEL=debug.
 */
export function startupNestLogger(root: RootLogger): LoggerService {
  const logger = nestLogger(root);
  const error = logger.error.bind(logger);
  logger.error = (message: unknown, ...rest: unknown[]) => {
    if (rest[rest.length - 1] === 'ExceptionHandler') logger.debug?.(message, ...rest);
    else error(message, ...rest);
  };
  return logger;
}

/**
 * The access log: one line per response, written when it has been sent, with the request id (Fastify's, from
 * X-Request-Id), method, route template, status, duration in ms and the account id; nothing of the headers or
 * bodies; `info`, or `error` with "request failed" for a 5xx (but the drain's expected 503s: expected-refusal.ts).
 * Every other line logged while the request is served carries its `requestId` (the logger's mixin reads it from
 * the request's WorkScope, its one AsyncLocalStorage, entered here).
 *
 * Written by hand rather than with pino-http (through nestjs-pino's middleware), which made two child loggers
 * per request (one bound to the whole request, one for the request's context) for this one line: a quarter of
 * a small request's throughput at the default level. Both hooks are callback style (no promise per request).
 * The line goes through one child logger made here, once, without redaction (see below).
 */
export function registerAccessLog(fastify: FastifyInstance, root: RootLogger): void {
  const access = accessLogger(root);
  // onRequest, 1st: every later hook, the handler and the access line run inside the request's context.
  // The request's WorkScope (its id for the log lines; the handler timeout and the drain cut it off).
  fastify.addHook('onRequest', (request, _reply, done) => WorkScope.run(new WorkScope(request.id), done));
  fastify.addHook('onResponse', (request, reply, done) => {
    const status = reply.statusCode;
    const line = {
      requestId: request.id,
      method: request.method,
      route: routeOf(request),
      status,
      durationMs: Math.round(reply.elapsedTime * 10) / 10,
      accountId: (request as { user?: { id: number } }).user?.id,
    };
    if (status >= 500 && !isExpectedRefusal(request)) access.error(line, 'request failed');
    else access.info(line, 'request completed');
    done();
  });
}
