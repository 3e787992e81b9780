import compress from '@fastify/compress';
import cors, { FastifyCorsOptions } from '@fastify/cors';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Logger } from '@nestjs/common';
import { ApiError } from '../errors/api-error';
import { sendError } from '../errors/global-exception.filter';

/** The methods an operation may have; OPTIONS is answered for every known path. */
const ROUTE_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
const SAFE_METHODS = ['GET', 'HEAD'];
const logger = new Logger('Errors');

/** Responses smaller than this are sent as they are: compressing them costs more than it saves. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

/** What a browser script on another origin may read of a response. */
export const CORS_EXPOSED_HEADERS = [
  'X-Request-Id',
  'Link',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'Deprecation',
  'Sunset',
  'Idempotent-Replayed',
];
/** What such a script may send beyond the CORS-safelisted headers (list of origins only). */
export const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-Request-Id'];

/** The methods some route of this app answers on `path` (a path, no query), OPTIONS included when any. */
export function allowedMethods(fastify: FastifyInstance, path: string): string[] {
  const methods = ROUTE_METHODS.filter((method) => fastify.findRoute({ method, url: path }) !== null);
  return methods.length ? [...methods, 'OPTIONS'] : [];
}

function pathOf(request: FastifyRequest): string {
  const query = request.url.indexOf('?');
  return query === -1 ? request.url : request.url.slice(0, query);
}

function isPreflight(request: FastifyRequest): boolean {
  return request.headers.origin !== undefined && request.headers['access-control-request-method'] !== undefined;
}

/**
 * Method semantics the router does not give by itself (RFC 9110 §15.5.6, §9.3.7): another method
 * on a known path answers 405 `method_not_allowed` with `Allow`, and OPTIONS on a known path answers
 * 204 with `Allow` (a CORS preflight, when CORS is on, is answered by @fastify/cors before this).
 * Hand-written because Fastify answers both with its 404; the router's own lookup (findRoute) says
 * which methods a path has. Registered after the request-id hook and the CORS plugin, so that these
 * answers carry both.
 */
export function registerMethodSemantics(fastify: FastifyInstance, corsEnabled: boolean): void {
  // Callback-style (a thrown error is handled like a rejection): no promise for the requests it lets through.
  fastify.addHook('onRequest', (request, reply, done) => {
    const options = request.method === 'OPTIONS' && !(corsEnabled && isPreflight(request));
    if (!options && !request.is404) return done();
    const allowed = allowedMethods(fastify, pathOf(request));
    if (!allowed.length) {
      // The CORS plugin's catch-all OPTIONS route took an unknown path. That route was added before
      // NestJS set the error handler, so a thrown error would not get the Error shape: answer here.
      if (options && !request.is404) sendError(ApiError.notFound('No such route.'), request, reply, logger);
      return done();
    }
    const allow = allowed.join(', ');
    if (options) {
      reply.header('Allow', allow).code(204).send();
      return done();
    }
    throw new ApiError(405, 'method_not_allowed', `${request.method} is not allowed here; use ${allow}.`, undefined, {
      Allow: allow,
    });
  });
}

/**
 * gzip, brotli or deflate for responses of at least COMPRESSION_THRESHOLD_BYTES that the client
 * accepts (the description is 154 KB, the Swagger UI bundle 1.5 MB). Only responses: a compressed
 * request body is not accepted (it would be a way around the body limit's intent). Registered
 * before any route, as the plugin attaches itself to each route when it is added.
 */
export async function registerCompression(app: NestFastifyApplication): Promise<void> {
  await app.register(compress, {
    global: true,
    globalDecompression: false,
    threshold: COMPRESSION_THRESHOLD_BYTES,
    encodings: ['br', 'gzip', 'deflate'],
  });
}

/** CORS_ORIGINS: '*' (anyone may read), a list of origins (they may do everything), or none. */
export type CorsOrigins = '*' | string[];

/**
 * The CORS headers of an answer given before the CORS hook runs (admission's 503 `overloaded`, assembly/pipeline.ts),
 * the same @fastify/cors gives an actual request: a browser script from an allowed origin may then read the refusal
 * and its Retry-After instead of seeing a network error. Undefined when nothing is to be added; origins are matched
 * exactly, as the plugin matches a list of strings.
 */
export function corsHeadersBeforeCors(
  origins: CorsOrigins,
): ((request: Pick<IncomingMessage, 'method' | 'headers'>) => Record<string, string> | undefined) | undefined {
  if (origins !== '*' && origins.length === 0) return undefined;
  const exposed = CORS_EXPOSED_HEADERS.join(', ');
  if (origins === '*') {
    const open = { 'access-control-allow-origin': '*', 'access-control-expose-headers': exposed };
    return (request) =>
      request.headers.origin !== undefined && SAFE_METHODS.includes(request.method ?? '') ? open : undefined;
  }
  const allowed = new Set(origins);
  const other = { vary: 'Origin' };
  return (request) => {
    const origin = request.headers.origin;
    if (origin === undefined || !allowed.has(origin)) return other;
    return { 'access-control-allow-origin': origin, 'access-control-expose-headers': exposed, vary: 'Origin' };
  };
}

/**
 * CORS for the origins of CORS_ORIGINS (nothing is registered without any: no CORS header at all).
 * With `*`, any origin may read (GET and HEAD, CORS-safelisted request headers only, no
 * credentials); with a list, those origins may use every method with an API key and an
 * Idempotency-Key. Either way the API's own headers are exposed. A plain OPTIONS (not a
 * preflight) is left to registerMethodSemantics.
 */
export async function registerCors(app: NestFastifyApplication, origins: CorsOrigins): Promise<boolean> {
  if (origins !== '*' && origins.length === 0) return false;
  const common: FastifyCorsOptions = {
    exposedHeaders: CORS_EXPOSED_HEADERS,
    credentials: false,
    maxAge: 600,
    strictPreflight: true,
  };
  const options: FastifyCorsOptions =
    origins === '*'
      ? { ...common, origin: '*', methods: SAFE_METHODS, allowedHeaders: ['X-Request-Id'] }
      : { ...common, origin: origins, methods: [...ROUTE_METHODS], allowedHeaders: CORS_ALLOWED_HEADERS };
  const off: FastifyCorsOptions = { origin: false };
  await app.register(cors, {
    delegator: (request: FastifyRequest, callback: (error: Error | null, options: FastifyCorsOptions) => void) => {
      if (request.method === 'OPTIONS' && !isPreflight(request)) return callback(null, off);
      // Public read-only use: no CORS header on what changes something.
      const unsafe = request.method !== 'OPTIONS' && !SAFE_METHODS.includes(request.method);
      callback(null, origins === '*' && unsafe ? off : options);
    },
  });
  return true;
}
