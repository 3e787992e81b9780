import { isUtf8 } from 'node:buffer';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyRequest, RawServerDefault } from 'fastify';
import { ApiError, ErrorDetail } from '../errors/api-error';

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** `Content-Encoding` of a body taken as it is: none, or `identity` (RFC 9110, 8.4.1). */
const UNENCODED = /^\s*(?:identity\s*)?$/i;

/** Methods that take no request body: a body sent with one is refused, not ignored (docs/api.md, Conventions). */
const BODILESS_METHODS = new Set(['GET', 'HEAD']);

/**
 * A request body is JSON or nothing: any other media type is refused (`400 missing_content_type`, the
 * specification's rule) before anything reads it. Nor is a body ever inflated (64 KiB of gzip can hold gigabytes):
 * one with a `Content-Encoding` (gzip, br…) is refused (`415 unsupported_content_encoding`, RFC 9110 8.4's answer).
 * Before, a compressed body was answered "not valid JSON", which did not say why, and a plain one labelled gzip was
 * taken as it was. Callback-style: a thrown error is handled like a rejection.
 */
export function registerJsonOnlyBodies(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, _reply, done) => {
    if (!hasBody(request)) return done();
    if (BODILESS_METHODS.has(request.method) && !request.is404) {
      // Before, it was read and ignored (answered 200), where docs/api.md says a body an operation does not take is
      // refused: a client that thinks it filters by a body must hear that it does not.
      throw ApiError.validation(`A ${request.method} request takes no body.`, [
        { field: 'body', message: `must be empty: ${request.method} takes no body` },
      ]);
    }
    if (!JSON_MEDIA_TYPE.test(request.headers['content-type'] ?? '')) {
      throw new ApiError(
        400,
        'missing_content_type',
        'A request body must be sent with "Content-Type: application/json".',
      );
    }
    const encoding = request.headers['content-encoding'];
    if (encoding !== undefined && !UNENCODED.test(encoding)) {
      throw new ApiError(
        415,
        'unsupported_content_encoding',
        'Request bodies are not decompressed: send the body uncompressed, without Content-Encoding (responses ' +
          'are still compressed when you send Accept-Encoding).',
      );
    }
    done();
  });
}

/**
 * A query string must be valid percent-encoding of UTF-8, as the path must be (the router answers a path that is not
 * `400 bad_request`). fast-querystring, Fastify's parser, leaves a sequence it cannot decode as it is (`%E0%A4%A`,
 * `%FF`), so such a value used to reach the handler literally. `decodeURIComponent` throws on exactly those: an
 * incomplete or non-hexadecimal escape, or bytes that are not UTF-8. Only a query holding `%` is decoded.
 */
export function registerQueryEncodingCheck(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, _reply, done) => {
    const url = request.url;
    const start = url.indexOf('?');
    if (start < 0 || url.indexOf('%', start) < 0) return done();
    try {
      decodeURIComponent(url.slice(start + 1));
    } catch {
      throw new ApiError(400, 'bad_request', 'The query string is not valid percent-encoding of UTF-8.');
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
 * The path of the first `__proto__` key, or `constructor` key holding `prototype`, in a valid JSON text (what
 * secure-json-parse refuses), or null when the text is not valid JSON. `JSON.parse` keeps `__proto__` as an own key.
 */
function prototypeKeyOf(text: string): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const stack: Array<{ path: string; value: unknown }> = [{ path: '', value: parsed }];
  while (stack.length) {
    const { path, value } = stack.pop() as { path: string; value: unknown };
    if (value === null || typeof value !== 'object') continue;
    for (const key of Object.keys(value)) {
      const child = (value as Record<string, unknown>)[key];
      const at = path ? `${path}.${key}` : key;
      if (key === '__proto__') return at;
      if (key === 'constructor' && child !== null && typeof child === 'object' && 'prototype' in child) return at;
      stack.push({ path: at, value: child });
    }
  }
  return null;
}

/** What a body that is not UTF-8 is refused with (RFC 8259, section 8.1: JSON between systems is UTF-8). */
const NOT_UTF8 = 'The request body is not valid UTF-8: send JSON in UTF-8 (RFC 8259).';

/**
 * Fastify's own JSON parser (secure-json-parse: `__proto__` and `constructor.prototype` keys
 * refused), behind the depth check. Registered through Nest's `useBodyParser`, which replaces
 * Nest's default parsers: a body in any other media type is refused before parsing anyway.
 *
 * A body that is not UTF-8 is refused first (400 `invalid_json`): decoding it would turn each invalid byte into
 * U+FFFD and store that, so a name sent in Latin-1 ("Caf\xE9") became "Caf\uFFFD" for good, answered 201. Whatever
 * the Content-Type's charset says: JSON is UTF-8, and a charset naming another encoding is not honoured either way.
 * `isUtf8` is Node's own check (simdutf), a small fraction of the parse that follows.
 */
export function registerJsonParser(app: NestFastifyApplication, bodyLimit: number): void {
  const fastify: FastifyInstance = app.getHttpAdapter().getInstance();
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  app.useBodyParser<RawServerDefault>('application/json', { bodyLimit }, (request, body, done) => {
    if (!isUtf8(body)) {
      done(new ApiError(400, 'invalid_json', NOT_UTF8));
      return;
    }
    if (jsonDepthExceeds(body, MAX_JSON_DEPTH)) {
      const message = `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`;
      done(
        ApiError.validation(message, [{ field: 'body', message: `is nested deeper than ${MAX_JSON_DEPTH} levels` }]),
      );
      return;
    }
    const text = body.toString('utf8');
    parseJson(request, text, (error, value) => {
      // secure-json-parse refuses `__proto__` (and `constructor.prototype`) keys, and Fastify reports that as
      // "not valid JSON". When the text is valid JSON, that was the reason: a field no operation takes, refused like
      // any unknown field (400 validation_failed, named). Only on this error path is the text parsed again.
      const field = error ? prototypeKeyOf(text) : null;
      if (field !== null) {
        done(
          ApiError.validation(`The request is invalid: ${field} is not a known field.`, [
            { field, message: `${field} is not a known field` },
          ]),
        );
        return;
      }
      done(error, value);
    });
  });
}

/**
 * One rule for every operation: no string of the path, the query or the body (keys included) may hold what
 * PostgreSQL text cannot store as it was sent: U+0000, which it refuses, and an unpaired surrogate (`"\ud800"`, a
 * JSON escape of half a character), which node-postgres's UTF-8 encoding turns into U+FFFD; a description sent so
 * was answered 201 as sent and read back changed. Checked in `preValidation`, after parsing and before anything
 * (guard, pipes, use cases) sees the request. A request that matched no route is left alone: whatever its URL holds,
 * the answer is 404 (or 405).
 */
export function registerStorableTextCheck(fastify: FastifyInstance): void {
  // Callback-style (a thrown error is handled like a rejection): no promise per request.
  fastify.addHook('preValidation', (request: FastifyRequest, _reply, done) => {
    if (request.is404) return done();
    // The path and the query are parsed from the URL, where U+0000 can only come from `%00` (Node's parser refuses a
    // raw one) and a surrogate not at all (percent-encoding is of UTF-8 bytes): without `%00`, neither needs walking.
    const fromUrl = request.url.includes('%00') || request.url.includes('\u0000');
    const body = request.body === undefined || request.body === null ? [] : unstorableFields(request.body, '');
    const details = fromUrl
      ? [...unstorableFields(request.params, ''), ...unstorableFields(request.query, ''), ...body]
      : body;
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
 * `String.prototype.isWellFormed` (ES2024: false when a surrogate is not half of a pair), in every Node this runs on
 * (20 and later) but not in the ES2022 library the sources compile against. V8's own loop: on a 2,000-character
 * string 32 ns, against 2 µs for the Unicode regex `/\p{Cs}/u`, on a path every body's every string takes.
 */
const isWellFormed = (text: string): boolean => (text as string & { isWellFormed(): boolean }).isWellFormed();

/** Why `text` cannot be stored as sent (U+0000, or an unpaired surrogate), or null. */
function unstorable(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain U+0000';
  return isWellFormed(text) ? null : 'must not contain an unpaired surrogate (U+D800–U+DFFF)';
}

/**
 * The fields of `value` whose name or text holds U+0000 or an unpaired surrogate, as dotted paths (`items.0.name`),
 * found with an explicit stack (no recursion over client data); at most MAX_DETAILS of them.
 */
export function unstorableFields(value: unknown, root: string): ErrorDetail[] {
  const found: ErrorDetail[] = [];
  const stack: Array<{ path: string; value: unknown }> = [{ path: root, value }];
  while (stack.length && found.length < MAX_DETAILS) {
    const { path, value: current } = stack.pop()!;
    if (typeof current === 'string') {
      const why = unstorable(current);
      if (why) found.push({ field: path || 'body', message: why });
    } else if (current !== null && typeof current === 'object') {
      for (const [key, child] of Object.entries(current)) {
        const childPath = path ? `${path}.${key}` : key;
        const why = unstorable(key);
        if (why) {
          found.push({
            field: childPath
              .replaceAll('\u0000', '\\u0000')
              .replace(/\p{Cs}/gu, (half) => `\\u${half.charCodeAt(0).toString(16)}`),
            message: `${why} in its name`,
          });
        } else {
          stack.push({ path: childPath, value: child });
        }
      }
    }
  }
  return found;
}
