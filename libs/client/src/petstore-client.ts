import createClient, { type Client, type FetchResponse, type MaybeOptionalInit, type Middleware } from 'openapi-fetch';
import type { paths } from './generated/schema.js';
import { type ClientErrorCode, type ErrorCode } from './error-codes.js';
import type { Schemas, Sent } from './sent.js';

export type { Schemas } from './sent.js';
export type ApiErrorBody = Schemas['Error'];

/** Every option may also be given as `undefined` (the default): `apiKey: process.env['PETSTORE_KEY']` compiles. */
export interface PetstoreClientOptions {
  /** Where the API answers, e.g. `https://petstore.example.com` (no trailing path). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`; omit for the public operations (sign-up, health). */
  apiKey?: string | undefined;
  /**
   * Retries of a request answered 429 or 503 (each after its `Retry-After`), or 409 `idempotency_key_in_use` (the
   * same key still running: after a backoff), default 3.
   */
  retries?: number | undefined;
  /**
   * Retries of a request that got no response: the connection failed or was lost, or `timeoutMs` passed (default 2).
   * Only requests that cannot be applied twice: a GET (or HEAD), and a POST, PATCH or DELETE, which always has its
   * `Idempotency-Key` (the same key again: the service replays what it did). A PUT whose response was lost is not
   * sent again: the error says it may have been done. Each waits a random time up to 0.5 s, 1 s, 2 s… (at most 8 s).
   */
  maxNetworkRetries?: number | undefined;
  /** How long one attempt may wait for its response before it counts as lost (default 60 s; 0: no limit). */
  timeoutMs?: number | undefined;
  /** A `Retry-After` longer than this (default 60 s) is not waited for: the 429/503 is returned as an error. */
  maxRetryDelayMs?: number | undefined;
  /**
   * The most one call waits in all its retries (default 60 s): a retry whose wait would take the total past it is
   * not made, and the last 429/503 is the error.
   */
  maxTotalRetryMs?: number | undefined;
  /**
   * The key of a POST, PATCH or DELETE that gives none (default: a random UUID). One call gives its own with
   * `params: { header: { 'Idempotency-Key': key } }`; the key used is the result's (or the error's) `idempotencyKey`.
   */
  idempotencyKey?: (() => string) | undefined;
  /** Default: the global fetch. */
  fetch?: ((request: Request) => Promise<Response>) | undefined;
  /** How to wait between retries (default: a timer); tests may record the delays instead. */
  sleep?: ((ms: number) => Promise<void>) | undefined;
  /** A number in [0, 1): the jitter of the retries (default: Math.random); tests fix it. */
  random?: (() => number) | undefined;
}

/** A response other than 2xx, after the retries: the API's `Error` body with the request id to quote. */
export class PetstoreApiError extends Error {
  override readonly name: string = 'PetstoreApiError';

  constructor(
    readonly status: number,
    /** One of the codes the API documents (`ErrorCode`), or a newer one this version of the client does not know. */
    readonly code: ErrorCode,
    message: string,
    /** The `X-Request-Id` of the response: the server logged the failure under it. */
    readonly requestId: string | null,
    readonly details: ApiErrorBody['details'] = undefined,
    /**
     * The `Idempotency-Key` the request was sent with (every POST, PATCH and DELETE has one): send it again to retry
     * safely.
     */
    readonly idempotencyKey: string | undefined = undefined,
    options?: { cause?: unknown; documentationUrl?: string | undefined },
  ) {
    super(message, options);
    this.documentationUrl = options?.documentationUrl;
  }

  /** Where the service documents `code` (the body's `documentationUrl`, resolved against the request's URL). */
  readonly documentationUrl: string | undefined;
}

/**
 * No response, after the retries (`maxNetworkRetries`): the connection failed or was lost (`connection_error`), or
 * none came within `timeoutMs` (`timeout`). `status` is 0 and `cause` the fetch error. The request may have been
 * done: a POST sent again with the same `idempotencyKey` is applied at most once (the service replays it).
 */
export class PetstoreConnectionError extends PetstoreApiError {
  override readonly name: string = 'PetstoreConnectionError';

  constructor(
    override readonly code: Extract<ClientErrorCode, 'connection_error' | 'timeout'>,
    message: string,
    idempotencyKey: string | undefined,
    cause: unknown,
  ) {
    super(0, code, message, null, undefined, idempotencyKey, { cause });
  }
}

type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';
/** The paths that have an operation for the method (openapi-typescript writes `get?: never` for the others). */
type PathsWith<M extends Method> = {
  [P in keyof paths]: paths[P] extends { [K in M]: object } ? P : never;
}[keyof paths];
type Operation<P extends keyof paths, M extends Method> = paths[P][M];

/** The paginated lists: a GET that answers a JSON array and takes a `cursor` (the iterator follows `Link`). */
export type ListPath = {
  [P in keyof paths]: paths[P] extends {
    get: {
      parameters: { query?: { cursor?: unknown } };
      responses: { 200: { content: { 'application/json': unknown[] } } };
    };
  }
    ? P
    : never;
}[keyof paths];
/** One item of a list path's array, as the service sends it. */
export type ListItem<P extends ListPath> = paths[P] extends {
  get: { responses: { 200: { content: { 'application/json': Array<infer Item> } } } };
}
  ? Sent<Item>
  : never;
/** The query parameters of a list path (without `cursor`, which the iterator follows). */
export type ListQuery<P extends ListPath> = paths[P] extends { get: { parameters: { query?: infer Query } } }
  ? Omit<NonNullable<Query>, 'cursor'>
  : never;
/** The path parameters of a list path (`{ endpointId }` of `/webhooks/endpoints/{endpointId}/deliveries`), or never. */
export type ListPathParams<P extends ListPath> = paths[P] extends { get: { parameters: { path: infer Params } } }
  ? Params
  : never;
/** `list(path, query?)`, or `list(path, query, pathParams)` for a list under a resource. */
export type ListArgs<P extends ListPath> = [ListPathParams<P>] extends [never]
  ? [query?: ListQuery<P>]
  : [query: ListQuery<P> | undefined, pathParams: ListPathParams<P>];

/**
 * The second argument of a call: openapi-fetch's (`params`, `body`, `headers`, `signal`…), exactly: a field the
 * operation does not have (`qty` for `quantity`) is a compile error in an object literal (openapi-fetch's own
 * signature adds `[key: string]: unknown`, which lets any through). `parseAs` is JSON only: the types say so.
 */
export type CallInit<P extends keyof paths, M extends Method> = Exclude<MaybeOptionalInit<paths[P], M>, undefined> & {
  parseAs?: 'json';
};
type RequiredKeysOf<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
type InitArgs<Init> = RequiredKeysOf<Init> extends never ? [init?: Init] : [init: Init];

/** The GETs that answer 304 to `If-None-Match`. */
type RevalidatingPath = {
  [P in PathsWith<'get'>]: Operation<P, 'get'> extends { responses: { 304: unknown } } ? P : never;
}[PathsWith<'get'>];
/** The init of a conditional GET: `If-None-Match` given (a 304 may come back). */
type RevalidatingInit<P extends RevalidatingPath> = CallInit<P, 'get'> & {
  params: { header: { 'If-None-Match': string | undefined } };
};
/** The init of any other call: where a GET could answer 304, `If-None-Match` absent (else the first signature). */
type PlainInit<P extends keyof paths, M extends Method> = P extends RevalidatingPath
  ? M extends 'get'
    ? CallInit<P, M> & { params?: { header?: { 'If-None-Match'?: never } } }
    : CallInit<P, M>
  : CallInit<P, M>;

/** The JSON body of an operation's 2xx, as the service sends it (`Sent`). */
export type SuccessBody<P extends keyof paths, M extends Method> =
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- openapi-fetch's own constraint of an operation
  Operation<P, M> extends infer Op extends Record<string | number, any>
    ? Sent<Extract<FetchResponse<Op, object, 'application/json'>, { error?: never }>['data']>
    : never;
/** `string` where the operation's 2xx always carries an `ETag` (single resources, PUT/PATCH, lists), else `null`. */
export type ETagOf<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { responses: { 200: { headers: { ETag: string } } } } ? string : null;
/** The `Idempotency-Key` the client sent: every POST, PATCH and DELETE has one (given, or generated); GET, PUT none. */
export type IdempotencyKeyOf<M extends Method> = M extends 'post' | 'patch' | 'delete' ? string : undefined;

/**
 * What a call resolves to: only ever the success (every non-2xx answer rejects with a PetstoreApiError), so `data`
 * is the operation's body type, not `T | undefined`, and no `unwrap` is needed.
 * - `etag`: the `ETag` of the resource the response carries (a string where the service always sends one: single
 *   resources and their PUT/PATCH, lists), else null. Send it back as `params: { header: { 'If-Match': etag } }` on a
 *   PUT/PATCH/DELETE to change the resource only if nobody changed it since (else a 412 `precondition_failed`), or as
 *   `'If-None-Match'` on the GET to revalidate;
 * - `notModified`: false here; see `Revalidated`;
 * - `idempotencyKey`: the key the POST, PATCH or DELETE was sent with (retries included): quote it to send the same
 *   request again.
 */
export interface Success<P extends keyof paths, M extends Method> {
  data: SuccessBody<P, M>;
  error?: never;
  response: Response;
  etag: ETagOf<P, M>;
  notModified: false;
  idempotencyKey: IdempotencyKeyOf<M>;
}

/**
 * A GET sent with `If-None-Match`: either the resource (it changed, or the tag was not its own), or a 304: it is
 * still the one you hold, there is no body (`data` is undefined), and it did not count against the rate limit.
 * Test `notModified` before reading `data`.
 */
export type Revalidated<P extends RevalidatingPath> =
  | Success<P, 'get'>
  | { data: undefined; error?: never; response: Response; etag: string; notModified: true; idempotencyKey: undefined };

/** Conditional requests: the `etag` and `notModified` of every result (see `Success`). */
export interface Conditional {
  etag: string | null;
  notModified: boolean;
}

/** One HTTP method of the client: openapi-fetch's call, typed exactly, resolving to the success only. */
export interface SucceedingMethod<M extends Method> {
  /** A GET with `If-None-Match`: the body, or a 304 (`notModified: true`, no `data`). */
  <P extends M extends 'get' ? RevalidatingPath : never>(url: P, init: RevalidatingInit<P>): Promise<Revalidated<P>>;
  <P extends PathsWith<M>>(url: P, ...init: InitArgs<PlainInit<P, M>>): Promise<Success<P, M>>;
}

export type PetstoreClient = Omit<Client<paths, 'application/json'>, 'GET' | 'PUT' | 'POST' | 'DELETE' | 'PATCH'> & {
  /** `const { data: pet } = await api.GET('/pets/{petId}', …)`: `data` is the body; a non-2xx rejects. */
  GET: SucceedingMethod<'get'>;
  PUT: SucceedingMethod<'put'>;
  POST: SucceedingMethod<'post'>;
  DELETE: SucceedingMethod<'delete'>;
  PATCH: SucceedingMethod<'patch'>;
  /**
   * Every item of a list, page after page: follows `Link: <…>; rel="next"` until there is none.
   * `for await (const pet of api.list('/pets', { status: ['available'] })) …`; a list under a resource takes its
   * path parameters third: `api.list('/webhooks/endpoints/{endpointId}/deliveries', {}, { endpointId })`. The
   * events' feed resumes from a saved position: `api.list('/events', { startingAfter: saved })`, each entry with its
   * own `position` to save next.
   */
  list<P extends ListPath>(path: P, ...args: ListArgs<P>): AsyncGenerator<ListItem<P>, void, undefined>;
};

const RETRIED_STATUSES = new Set([429, 503]);
/** 429 codes no wait can cure: the credentials did not authenticate (the API's failed-authentication budget). */
const NOT_WORTH_WAITING = new Set<string>(['too_many_auth_failures']);
/** The methods sent again when their response is lost: those a second arrival cannot apply twice (and keyed writes). */
const SAFE_METHODS = new Set(['GET', 'HEAD']);
/** The methods the service takes an `Idempotency-Key` on (docs/api.md, Idempotency): each gets one. */
const KEYED_METHODS = new Set(['POST', 'PATCH', 'DELETE']);
/** The backoff of a retry without `Retry-After` (a lost response, a key in use): full jitter up to this, doubling. */
const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 8_000;

/**
 * The typed client of the Petstore API: openapi-fetch over the generated types, plus what every caller needs.
 * Every non-2xx answer rejects with a PetstoreApiError; a call that resolves carries the typed body in `data`.
 */
export function createPetstoreClient(options: PetstoreClientOptions): PetstoreClient {
  const fetchOnce = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const client = createClient<paths, 'application/json'>({
    baseUrl,
    fetch: retrying(fetchOnce, options),
  });
  // The key each response answered (the result's `idempotencyKey`), read from its request by the middleware.
  const keys = new WeakMap<Response, string>();
  client.use(authAndIdempotency(options, keys), errorsAsExceptions);
  for (const method of ['GET', 'PUT', 'POST', 'DELETE', 'PATCH'] as const) {
    const call = client[method] as (...args: unknown[]) => Promise<{ response: Response }>;
    Object.assign(client, {
      [method]: (...args: unknown[]) =>
        call(...args).then((result) =>
          Object.assign(result, conditionalOf(result), { idempotencyKey: keys.get(result.response) }),
        ),
    });
  }

  async function* list<P extends ListPath>(
    path: P,
    ...[query, pathParams]: ListArgs<P>
  ): AsyncGenerator<ListItem<P>, void, undefined> {
    // openapi-fetch types each path's call; this one generic loop over them speaks to it untyped.
    // The next pages go through the same client (key, retries, errors): the path, with the Link's query.
    const get = client.GET as unknown as (url: string, init: object) => Promise<{ data?: unknown; response: Response }>;
    let next: URL | null = null;
    do {
      const search: string | undefined = next?.search.slice(1);
      const { data, response } = await get(
        path,
        search === undefined
          ? { params: { query, path: pathParams } }
          : { params: { path: pathParams }, querySerializer: () => search },
      );
      for (const item of (data ?? []) as Array<ListItem<P>>) yield item;
      next = nextPage(response, baseUrl);
    } while (next);
  }

  // The same openapi-fetch client: errorsAsExceptions makes every call that resolves a success, which is what the
  // narrower method types say.
  return Object.assign(client, { list }) as unknown as PetstoreClient;
}

/**
 * The body of a successful call: kept for code written before the calls were typed as successes
 * (`const pet = await unwrap(api.GET('/pets/{petId}', …))` is `(await api.GET(…)).data`). A 2xx without the body
 * its operation documents (and a 304) rejects.
 */
export async function unwrap<R extends { data?: unknown; response: Response }>(
  call: Promise<R>,
): Promise<SuccessData<R>> {
  const result = await call;
  if (result.data === undefined && result.response.status !== 204) {
    throw new PetstoreApiError(
      result.response.status,
      'empty_response',
      'The response has no body.',
      requestIdOf(result.response),
    );
  }
  return result.data as SuccessData<R>;
}

/** The body type of a success (`{ data; error?: never }`). */
export type SuccessData<R> = R extends { data: infer Data; error?: never } ? Exclude<Data, undefined> : never;

function authAndIdempotency(options: PetstoreClientOptions, keys: WeakMap<Response, string>): Middleware {
  const newKey = options.idempotencyKey ?? (() => globalThis.crypto.randomUUID());
  return {
    onRequest({ request }) {
      if (options.apiKey && !request.headers.has('authorization'))
        request.headers.set('Authorization', `Bearer ${options.apiKey}`);
      // Every POST, PATCH and DELETE gets a key, so that a retry (here or by the caller with the same key) is never
      // applied twice. The operations that do not take one ignore it.
      if (KEYED_METHODS.has(request.method) && !request.headers.has('idempotency-key'))
        request.headers.set('Idempotency-Key', newKey());
      return request;
    },
    onResponse({ request, response }) {
      const key = request.headers.get('idempotency-key');
      if (key !== null) keys.set(response, key);
      return response;
    },
  };
}

/** The `ETag` of a response and whether it is a 304 (`Conditional`). */
export function conditionalOf(result: { response: Response }): Conditional {
  return { etag: result.response.headers.get('etag'), notModified: result.response.status === 304 };
}

const errorsAsExceptions: Middleware = {
  async onResponse({ request, response }) {
    // A 304 answers a GET sent with If-None-Match: the resource did not change, which is not an error.
    if (response.ok || response.status === 304) return response;
    const body = await errorBodyOf(response);
    throw new PetstoreApiError(
      response.status,
      typeof body?.code === 'string' ? body.code : 'http_error',
      typeof body?.message === 'string' ? body.message : `HTTP ${response.status}`,
      requestIdOf(response),
      body?.details,
      request.headers.get('idempotency-key') ?? undefined,
      { documentationUrl: documentationUrlOf(body, request.url) },
    );
  },
};

/** The body's `documentationUrl` (a path of the service) as an absolute URL, or undefined. */
function documentationUrlOf(body: Partial<ApiErrorBody> | undefined, requestUrl: string): string | undefined {
  const link = body?.documentationUrl;
  if (typeof link !== 'string' || !URL.canParse(link, requestUrl)) return undefined;
  return new URL(link, requestUrl).href;
}

async function errorBodyOf(response: Response): Promise<Partial<ApiErrorBody> | undefined> {
  return (await response
    .clone()
    .json()
    .catch(() => undefined)) as Partial<ApiErrorBody> | undefined;
}

/** Why an attempt got no response: the caller's own abort (not retried), the client's timeout, or the connection. */
type Lost = { kind: 'aborted' | 'timeout' | 'connection_error'; error: unknown };

/**
 * One attempt, bounded by `timeoutMs`: the request's signal is aborted when it passes, and a fetch that does not
 * heed signals is not waited for either (the attempt rejects).
 */
async function attempt(
  fetchOnce: (request: Request) => Promise<Response>,
  request: Request,
  timeoutMs: number,
): Promise<Response | Lost> {
  // One signal for the attempt: the caller's abort or the timeout (by hand: AbortSignal.any needs Node.js 20.3).
  const controller = new AbortController();
  const callerAborted = () => controller.abort(request.signal.reason);
  if (request.signal.aborted) callerAborted();
  else request.signal.addEventListener('abort', callerAborted, { once: true });
  let timedOut = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    if (timeoutMs > 0) {
      timer = setTimeout(() => {
        timedOut = true;
        const error = new DOMException(`No response within ${timeoutMs} ms`, 'TimeoutError');
        controller.abort(error);
        reject(error);
      }, timeoutMs);
    }
  });
  try {
    return await Promise.race([fetchOnce(new Request(request.clone(), { signal: controller.signal })), timeout]);
  } catch (error) {
    if (request.signal.aborted) return { kind: 'aborted', error };
    return { kind: timedOut ? 'timeout' : 'connection_error', error };
  } finally {
    clearTimeout(timer);
    request.signal.removeEventListener('abort', callerAborted);
    timeout.catch(() => undefined);
  }
}

/**
 * Sends a request again, with the same request (so the same Idempotency-Key), as long as it is safe and waiting can
 * help:
 * - no response (a connection error, a lost response, `timeoutMs` passed): a GET, HEAD or keyed write, at most
 *   `maxNetworkRetries` times, after a full-jitter backoff (a random wait up to 0.5 s, 1 s, 2 s…, at most 8 s: the
 *   clients cut off together must not all come back in the same instant). The last failure rejects with a
 *   PetstoreConnectionError;
 * - a 409 `idempotency_key_in_use` (the first attempt of this key is still running on the service: a lost response
 *   retried too soon), after its `Retry-After` or the same backoff;
 * - a 429 or 503 after its `Retry-After`: not a wait over `maxRetryDelayMs`, not a 429 whose code says no wait cures
 *   it (too many failed authentications: the key is wrong), nor a 503 `outcome_unknown` sent without an
 *   Idempotency-Key (the write may have been done: sending it again could do it twice). A 503 `overloaded` (the
 *   instance's admission limit refused it, nothing done) waits its `Retry-After` plus up to as much again at random.
 * Answered retries count against `retries`, lost ones against `maxNetworkRetries`; all their waits against
 * `maxTotalRetryMs`.
 */
function retrying(fetchOnce: (request: Request) => Promise<Response>, options: PetstoreClientOptions) {
  const retries = options.retries ?? 3;
  const networkRetries = options.maxNetworkRetries ?? 2;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const maxDelayMs = options.maxRetryDelayMs ?? 60_000;
  const maxTotalMs = options.maxTotalRetryMs ?? 60_000;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const random = options.random ?? Math.random;
  const backoff = (n: number) => Math.round(random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** n));
  return async (request: Request): Promise<Response> => {
    const key = request.headers.get('idempotency-key') ?? undefined;
    const resendable = SAFE_METHODS.has(request.method) || (KEYED_METHODS.has(request.method) && key !== undefined);
    let waitedMs = 0;
    let answered = 0;
    let lost = 0;
    for (;;) {
      const outcome = await attempt(fetchOnce, request, timeoutMs);
      if (!(outcome instanceof Response)) {
        if (outcome.kind === 'aborted') throw outcome.error;
        const delayMs = backoff(lost);
        if (!resendable || lost >= networkRetries || waitedMs + delayMs > maxTotalMs) {
          throw new PetstoreConnectionError(
            outcome.kind,
            `${outcome.kind === 'timeout' ? `No response within ${timeoutMs} ms` : 'The connection failed'} ` +
              `(${request.method} ${new URL(request.url).pathname}, ${lost + 1} attempt(s))` +
              (resendable ? '' : ': it may have been done, and is not sent again'),
            key,
            outcome.error,
          );
        }
        await sleep(delayMs);
        waitedMs += delayMs;
        lost++;
        continue;
      }
      const response = outcome;
      const retriedStatus = RETRIED_STATUSES.has(response.status) || response.status === 409;
      if (answered >= retries || !retriedStatus) return response;
      const code = (await errorBodyOf(response))?.code;
      if (response.status === 409 && (code !== 'idempotency_key_in_use' || key === undefined)) return response;
      const askedMs = retryAfterMs(response.headers.get('retry-after'));
      if (askedMs !== undefined && askedMs > maxDelayMs) return response;
      let delayMs: number;
      if (response.status === 409) delayMs = askedMs ?? backoff(answered);
      else if (response.status === 503 && code === 'overloaded') {
        // Never sooner than asked; jittered up to twice that, within the total budget.
        const asked = askedMs ?? 2 ** answered * 1000;
        delayMs = Math.min(Math.round(asked * (1 + random())), Math.max(asked, maxTotalMs - waitedMs));
      } else delayMs = askedMs ?? 2 ** answered * 1000;
      if (waitedMs + delayMs > maxTotalMs) return response;
      if (response.status === 429 && NOT_WORTH_WAITING.has(String(code))) return response;
      // A write that may have been done: sent again only with its Idempotency-Key (which replays it if it was).
      if (response.status === 503 && key === undefined && code === 'outcome_unknown') return response;
      await response.body?.cancel();
      await sleep(delayMs);
      waitedMs += delayMs;
      answered++;
    }
  };
}

/** `Retry-After` is either seconds or an HTTP-date (RFC 9110, 10.2.3). */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * The `rel="next"` target of a `Link` header, resolved against the response's URL. Hand-written: a Link value is
 * a comma-separated list of `<uri>; param=value`, and the API sends at most the one `next` link this reads.
 */
export function nextPage(response: Response, baseUrl: string): URL | null {
  const header = response.headers.get('link');
  if (!header) return null;
  for (const link of header.split(/,(?=\s*<)/)) {
    const [, target, params] = /^\s*<([^>]*)>(.*)$/.exec(link) ?? [];
    if (target !== undefined && params !== undefined && /;\s*rel="?([^";]*\s)?next(\s[^";]*)?"?\s*(;|$)/i.test(params))
      return new URL(target, response.url || baseUrl);
  }
  return null;
}

function requestIdOf(response: Response): string | null {
  return response.headers.get('x-request-id');
}
