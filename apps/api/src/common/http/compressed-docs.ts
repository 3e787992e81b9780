import negotiator from '@fastify/accept-negotiator';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';

/**
 * Representations kept at most: the documentation's paths (a few dozen files) in three encodings, with room. A bound,
 * as the key is the requested path, which a client may spell in ways no normalising foresees.
 */
const MAX_KEPT = 200;

/** What @fastify/compress offers, in its order of preference (registerCompression). */
const ENCODINGS = ['br', 'gzip', 'deflate'] as const;
type Encoding = (typeof ENCODINGS)[number];

/**
 * The documentation the service serves, the same for every caller and for the life of the process: the description
 * (`/openapi.json`, `/openapi.yaml`), Swagger UI (`/docs`, its `swagger-ui-init.js`, which holds the description too,
 * and the swagger-ui-dist files) and the error list (`/docs/errors`).
 */
const STATIC_DOCS = /^\/(?:openapi\.(?:json|yaml)|docs(?:\/.*)?)$/;

/**
 * Compressed once per path and encoding, at first use, and kept: @fastify/compress compressed them again on every
 * request (`swagger-ui-init.js` is 666 KB, `/openapi.json` 309 KB: about 20 ms of CPU each, against 2 ms for a page of
 * pets), and they need no key, so a few addresses asking for them slowed every caller (issue 48, item 5). As the
 * plugin does: the encoding negotiated from `Accept-Encoding` by the same negotiator (br, then gzip, then deflate),
 * `Vary: Accept-Encoding`; a representation under the plugin's threshold, a status other than 200 (a 304 or a 206 of
 * @fastify/static) or a HEAD is left to it.
 */
export class CompressedDocs {
  /**
   * Per `path encoding`: the bytes to send, or their compression under way (concurrent first requests share it);
   * `encoded` false for a body under the threshold, sent as it is.
   */
  private readonly cache = new Map<string, Promise<{ bytes: Buffer; encoded: boolean }>>();
  /** Compressions run: one per path and encoding for the life of the process. */
  compressions = 0;

  constructor(private readonly threshold: number) {}

  register(fastify: FastifyInstance): void {
    // A hook of the instance runs before the plugin's, which @fastify/compress adds to each route: once this one has
    // set Content-Encoding, the plugin leaves the body alone.
    // Callback-style: no promise for the responses that are not documentation (all but a few).
    fastify.addHook('onSend', (request, reply, payload, done) => {
      if (request.method !== 'GET' || reply.statusCode !== 200 || reply.getHeader('content-encoding')) {
        return done(null, payload);
      }
      const path = normalised(request.url);
      const encoding = path !== null && STATIC_DOCS.test(path) ? negotiated(request) : undefined;
      const key = `${path} ${encoding}`;
      // Past the bound (spellings of a path the normalising missed), the plugin compresses as it did before.
      if (encoding === undefined || (this.cache.size >= MAX_KEPT && !this.cache.has(key))) return done(null, payload);
      this.bytes(key, payload, encoding).then(({ bytes, encoded }) => {
        if (encoded) send(reply, encoding, bytes);
        done(null, bytes);
      }, done);
    });
  }

  /** The bytes kept for `key`, or the payload's, compressed and kept. */
  private bytes(key: string, payload: unknown, encoding: Encoding): Promise<{ bytes: Buffer; encoded: boolean }> {
    let kept = this.cache.get(key);
    if (kept) {
      if (payload instanceof Readable) payload.destroy(); // a static file's stream, not needed
      return kept;
    }
    kept = this.compress(payload, encoding);
    this.cache.set(key, kept);
    kept.catch(() => this.cache.delete(key)); // a failed read is tried again by the next request
    return kept;
  }

  /** The body, compressed; as it is when under the threshold (the plugin's rule). */
  private async compress(payload: unknown, encoding: Encoding): Promise<{ bytes: Buffer; encoded: boolean }> {
    const raw = await bytesOf(payload);
    if (raw.length < this.threshold) return { bytes: raw, encoded: false };
    this.compressions++;
    return { bytes: await encode(raw, encoding), encoded: true };
  }
}

function encode(raw: Buffer, encoding: Encoding): Promise<Buffer> {
  switch (encoding) {
    case 'br':
      return brotli(raw, {
        params: {
          [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
          [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
          [zlib.constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
        },
      });
    case 'gzip':
      return gzip(raw, { level: zlib.constants.Z_BEST_COMPRESSION });
    case 'deflate':
      return deflate(raw, { level: zlib.constants.Z_BEST_COMPRESSION });
  }
}

/**
 * Paid once, so better than the plugin's per-request 4; not the best (11): on swagger-ui-bundle.js (1.5 MB) 9 takes
 * 0.5 s and gives 373 KB, 11 takes 6 s for 341 KB, and the first reader waits for it.
 */
const BROTLI_QUALITY = 9;
const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);
const deflate = promisify(zlib.deflate);

/** The encoding @fastify/compress would choose for this request (its own rule: `*` and `x-gzip` mean gzip). */
function negotiated(request: FastifyRequest): Encoding | undefined {
  const header = request.headers['accept-encoding'];
  if (header === undefined) return undefined;
  const chosen = negotiator.negotiate(header.toLowerCase().replace(/\*|x-gzip/gu, 'gzip'), [...ENCODINGS]);
  return ENCODINGS.find((encoding) => encoding === chosen);
}

/** The path without its query, percent-escapes decoded (as the router and @fastify/static read it); null if invalid. */
function normalised(url: string): string | null {
  try {
    return decodeURIComponent(url.split('?', 1)[0]);
  } catch {
    return null;
  }
}

function send(reply: FastifyReply, encoding: Encoding, body: Buffer): void {
  const vary = reply.getHeader('vary');
  const varies = typeof vary === 'string' && /(^|,)\s*accept-encoding\s*(,|$)/i.test(vary);
  if (!varies) void reply.header('Vary', vary ? `${String(vary)}, Accept-Encoding` : 'Accept-Encoding');
  void reply.header('Content-Encoding', encoding).header('Content-Length', body.length);
  reply.removeHeader('accept-ranges'); // @fastify/static's: ranges of the file, not of these bytes
}

async function bytesOf(payload: unknown): Promise<Buffer> {
  if (typeof payload === 'string') return Buffer.from(payload);
  if (Buffer.isBuffer(payload)) return payload;
  if (payload instanceof Readable) {
    const chunks: Buffer[] = [];
    for await (const chunk of payload) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    return Buffer.concat(chunks);
  }
  throw new Error('A documentation body that is neither text, bytes nor a stream');
}
