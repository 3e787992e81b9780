import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyRequest, RawServerDefault } from 'fastify';
import { ApiError, ErrorDetail } from '../errors/api-error';

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * A request body is JSON or nothing: any other media type is refused (`400 missing_content_type`, the
 * specification's rule) before anything reads it. Callback-style: a thrown error is handled like a rejection.
 */
export function registerJsonOnlyBodies(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, _reply, done) => {
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

/** JSON nested deeper than this is refused before it is parsed (docs/api.md, Other limits). */
export const MAX_JSON_DEPTH = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * The deepest nesting of arrays and objects in a JSON text, counted without parsing it and
 * without recursion, stopping as soon as `limit` is passed. Hand-written because neither
 * JSON.parse nor Fastify's secure-json-parse bounds depth, and everything that walks a parsed
 * body afterwards (class-transformer, class-validator, the idempotency fingerprint) recurses:
 * 20,000 nested arrays in 40 KB overflow the stack. Scanning UTF-8 bytes is safe: the bytes of
 * a multi-byte character are never ASCII, so only real quotes, backslashes and brackets count.
 * Invalid JSON is left to the parser that follows.
 */
export function jsonDepthExceeds(text: Buffer, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const byte = text[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/**
 * Fastify's own JSON parser (secure-json-parse: `__proto__` and `constructor.prototype` keys
 * refused), behind the depth check. Registered through Nest's `useBodyParser`, which replaces
 * Nest's default parsers: a body in any other media type is refused before parsing anyway.
 */
export function registerJsonParser(app: NestFastifyApplication, bodyLimit: number): void {
  const fastify: FastifyInstance = app.getHttpAdapter().getInstance();
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  app.useBodyParser<RawServerDefault>('application/json', { bodyLimit }, (request, body, done) => {
    if (jsonDepthExceeds(body, MAX_JSON_DEPTH)) {
      const message = `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`;
      done(
        ApiError.validation(message, [{ field: 'body', message: `is nested deeper than ${MAX_JSON_DEPTH} levels` }]),
      );
      return;
    }
    parseJson(request, body.toString('utf8'), done);
  });
}

/**
 * One rule for every operation: no string of the path, the query or the body (keys included)
 * may hold U+0000, which PostgreSQL text cannot store. Checked in `preValidation`, after
 * parsing and before anything (guard, pipes, use cases) sees the request. A request that
 * matched no route is left alone: whatever its URL holds, the answer is 404 (or 405).
 */
export function registerNulCheck(fastify: FastifyInstance): void {
  // Callback-style (a thrown error is handled like a rejection): no promise per request.
  fastify.addHook('preValidation', (request: FastifyRequest, _reply, done) => {
    if (request.is404) return done();
    // The path and the query are parsed from the URL, where U+0000 can only come from `%00`
    // (Node's parser refuses a raw one): without it, neither needs walking.
    const fromUrl = request.url.includes('%00') || request.url.includes('\u0000');
    const body = request.body === undefined || request.body === null ? [] : nulFields(request.body, '');
    const details = fromUrl ? [...nulFields(request.params, ''), ...nulFields(request.query, ''), ...body] : body;
    if (details.length) {
      throw ApiError.validation(
        `The request is invalid: ${details.map((d) => `${d.field} ${d.message}`).join('; ')}.`,
        details,
      );
    }
    done();
  });
}

const MAX_DETAILS = 10;

/**
 * The fields of `value` whose name or text contains U+0000, as dotted paths (`items.0.name`),
 * found with an explicit stack (no recursion over client data); at most MAX_DETAILS of them.
 */
export function nulFields(value: unknown, root: string): ErrorDetail[] {
  const found: ErrorDetail[] = [];
  const stack: Array<{ path: string; value: unknown }> = [{ path: root, value }];
  while (stack.length && found.length < MAX_DETAILS) {
    const { path, value: current } = stack.pop()!;
    if (typeof current === 'string') {
      if (current.includes('\u0000')) found.push({ field: path || 'body', message: 'must not contain U+0000' });
    } else if (current !== null && typeof current === 'object') {
      for (const [key, child] of Object.entries(current)) {
        const childPath = path ? `${path}.${key}` : key;
        if (key.includes('\u0000')) {
          found.push({
            field: childPath.replaceAll('\u0000', '\\u0000'),
            message: 'must not contain U+0000 in its name',
          });
        } else {
          stack.push({ path: childPath, value: child });
        }
      }
    }
  }
  return found;
}
