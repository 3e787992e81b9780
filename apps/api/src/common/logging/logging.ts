import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LoggerService } from '@nestjs/common';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Logger as NestPinoLogger, Params, PinoLogger } from 'nestjs-pino';
import pino, { DestinationStream, Logger, LoggerOptions } from 'pino';
import type { Options as HttpLoggerOptions } from 'pino-http';
import pretty from 'pino-pretty';
import { ConfigPart, LogLevelName } from '../../config/app-config';
import { routeOf } from '../http/route-label';

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
  };
  if (destination) return pino(options, destination);
  if (config.logFormat === 'pretty') {
    const stream = pretty({ sync: true, singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
    return pino(options, stream);
  }
  return pino(options);
}

/** A logger that logs nothing (the tests' `logger: false`). */
export function silentLogger(): RootLogger {
  return pino({ level: 'silent' });
}

/** The same logger behind Nest's LoggerService interface (framework logs, `new Logger(context)`). */
export function nestLogger(root: RootLogger): LoggerService {
  return new NestPinoLogger(new PinoLogger({ pinoHttp: { logger: root } }), {});
}

const FASTIFY_REQUEST = Symbol('petstore.fastifyRequest');
type RawRequest = IncomingMessage & { [FASTIFY_REQUEST]?: FastifyRequest & { user?: { id: number } } };

/**
 * pino-http sees Node's raw request; the route template and the authenticated account live on
 * Fastify's request. This hook links the two, for the request line written when the response ends.
 */
export function registerRequestLogContext(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, _reply, done) => {
    (request.raw as RawRequest)[FASTIFY_REQUEST] = request;
    done();
  });
}

function requestLine(req: IncomingMessage, res: ServerResponse, durationMs: unknown): Record<string, unknown> {
  const request = (req as RawRequest)[FASTIFY_REQUEST];
  return {
    method: req.method,
    route: routeOf(request),
    status: res.statusCode,
    durationMs,
    accountId: request?.user?.id,
  };
}

/** The key of pino-http's per-request binding of the whole request, which is never written (see below). */
const UNUSED_REQUEST_BINDING = 'petstoreUnusedRequest';

/**
 * nestjs-pino's settings: one line per request, written when the response ends, with the request
 * id (Fastify's, from X-Request-Id), method, route template, status, duration in ms and the account
 * id; nothing of the headers or bodies. Application logs inside a request carry its `requestId`.
 */
export function httpLoggerParams(root: RootLogger): Params {
  const { req, res, err } = pino.stdSerializers;
  const pinoHttp: HttpLoggerOptions = {
    logger: root,
    quietReqLogger: true,
    quietResLogger: true,
    // pino-http also makes, for every request, a child logger bound to the whole request (`log.child({ req })`),
    // which pino serialises and redacts at once; with quietReqLogger and quietResLogger nothing ever logs through
    // it (about 6% of a small request's CPU). Bound under a key of its own whose serializer yields nothing, that
    // child costs next to nothing. The serializers are pino-http's own otherwise (its wrapping of the standard
    // ones is the identity), so a log call that puts a `req`, `res` or `err` in its object is written as before.
    customAttributeKeys: { req: UNUSED_REQUEST_BINDING, reqId: 'requestId', responseTime: 'durationMs' },
    wrapSerializers: false,
    serializers: { req, res, err, [UNUSED_REQUEST_BINDING]: () => undefined },
    customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : 'info'),
    customSuccessObject: (req, res, value: Record<string, unknown>) => requestLine(req, res, value['durationMs']),
    customSuccessMessage: () => 'request completed',
    customErrorObject: (req, res, _error, value: Record<string, unknown>) => requestLine(req, res, value['durationMs']),
    customErrorMessage: () => 'request failed',
  };
  return { pinoHttp };
}
