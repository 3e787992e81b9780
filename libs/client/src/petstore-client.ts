import createClient, { type Client, type FetchResponse, type MaybeOptionalInit, type Middleware } from 'openapi-fetch';
import type { paths } from './generated/schema.js';
import { type ClientErrorCode, type ErrorCode } from './error-codes.js';
import type { FeedEntry, Schemas, Sent } from './sent.js';

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
  /**
   * How to wait between retries and between `followEvents()` polls (default: a timer that the call's `signal` ends);
   * tests may record the delays instead. A wait is ended by an abort whether or not `sleep` heeds the signal.
   */
  sleep?: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined;
  /**
   * Called before each wait of a retry (a 429 or 503 and its `Retry-After`, a lost response, a 409
   * `idempotency_key_in_use`, and `followEvents()`'s waits after a failure), so that a long wait is visible:
   * `onRetry: (r) => log.warn(`${r.method} ${r.url}: ${r.status} ${r.code}, retry ${r.attempt} in ${r.delayMs} ms`)`.
   * A hook that throws fails the call with its error, without the wait (a way to give up).
   */
  onRetry?: ((retry: RetryNotice) => void) | undefined;
  /** A number in [0, 1): the jitter of the retries (default: Math.random); tests fix it. */
  random?: (() => number) | undefined;
}

/** What `onRetry` is told before a wait: which request, why, and for how long. */
export interface RetryNotice {
  /** The retry about to be made: 1 for the first. */
  attempt: number;
  /** How long the client waits before it (the `Retry-After` asked, or a backoff). */
  delayMs: number;
  method: string;
  /** The request's URL. */
  url: string;
  /** The status answered, or 0 when no response came. */
  status: number;
  /** The answer's `code` (`rate_limited`, `overloaded`…), `connection_error` or `timeout`, or `http_error`. */
  code: ErrorCode;
  /** The answer's `Retry-After`, in milliseconds, when it had one. */
  retryAfterMs: number | undefined;
  /** The answer's `X-Request-Id` (null when no response came). */
  requestId: string | null;
  /** The key the request is sent again with (POST, PATCH, DELETE). */
  idempotencyKey: string | undefined;
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
    options?: { cause?: unknown; documentationUrl?: string | undefined; retryAfterMs?: number | undefined },
  ) {
    super(message, options);
    this.documentationUrl = options?.documentationUrl;
    this.retryAfterMs = options?.retryAfterMs;
  }

  /** Where the service documents `code` (the body's `documentationUrl`, resolved against the request's URL). */
  readonly documentationUrl: string | undefined;
  /** The answer's `Retry-After` in milliseconds (a 429 or 503 the client did not wait for), when it had one. */
  readonly retryAfterMs: number | undefined;
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
/**
 * `list(path, query?, options?)`, or `list(path, query, pathParams, options?)` for a list under a resource.
 */
export type ListArgs<P extends ListPath> = [ListPathParams<P>] extends [never]
  ? [query?: ListQuery<P>, options?: ListOptions]
  : [query: ListQuery<P> | undefined, pathParams: ListPathParams<P>, options?: ListOptions];

/** A query of the events' commit-order feed: `order=commit`, or a position to page from. */
export type FeedQuery = ListQuery<'/events'> &
  ({ order: 'commit' } | { startingAfter: string } | { endingBefore: string });

/**
 * A page `list()` received, as a `PageCache` keeps it: its tag, its items (as received) and the URL of its next page.
 * Plain data: a cache may store it as JSON.
 */
export interface CachedPage {
  etag: string;
  items: unknown[];
  next: string | null;
}

/**
 * Where `list()` keeps the pages it received, by URL, to ask for them again with `If-None-Match`: a `Map<string,
 * CachedPage>` will do (it keeps every page: give an LRU cache to bound it, e.g. lru-cache's `LRUCache`, whose `get`
 * and `set` fit). `get` may answer a promise (a cache in Redis or on disk).
 */
export interface PageCache {
  get(url: string): CachedPage | undefined | PromiseLike<CachedPage | undefined>;
  set(url: string, page: CachedPage): unknown;
}

/** The options of one `list()`. */
export interface ListOptions {
  /**
   * Revalidate the pages already seen: each page held in `cache` is asked with its tag in `If-None-Match`, and a
   * 304 (free: not counted by the rate limit) yields the stored items again; every 200 is stored.
   */
  cache?: PageCache | undefined;
  /** Ends the listing: the page being fetched is abandoned and the iteration throws the signal's reason. */
  signal?: AbortSignal | undefined;
}

/** The options of `followEvents()`. */
export interface FollowEventsOptions extends Pick<ListQuery<'/events'>, 'type' | 'createdAfter' | 'createdBefore'> {
  /**
   * The `position` of the last event you applied (kept in your storage): the feed resumes after it. Absent: from the
   * start of the feed (the oldest event kept).
   */
  after?: string | undefined;
  /** Events per request (1–100, default 100). */
  limit?: number | undefined;
  /** How long to wait at the end of the feed before asking again (default 1000 ms). Each ask is a free 304. */
  pollIntervalMs?: number | undefined;
  /**
   * The longest wait between failed asks when the answer gives no `Retry-After` (default 60 s): after a 5xx, a 429,
   * or no response (once the client's own retries are spent), waits double from 1 s up to it, jittered.
   */
  maxBackoffMs?: number | undefined;
  /** Stops following: the iteration ends (no error), at once, even during a wait. */
  signal?: AbortSignal | undefined;
}

/** The brand that tells a resource's entity tag from a list page's (`ResourceTag`, `PageTag`). */
declare const tagKind: unique symbol;
/**
 * The `ETag` of one resource (`GET /pets/{petId}`, and the PUT/PATCH that change it): what `If-Match` takes, to change
 * the resource only if nobody changed it since. A string, so that it can be stored, logged and compared.
 */
export type ResourceTag = string & { readonly [tagKind]: 'resource' };
/**
 * The `ETag` of a list's page (`GET /pets`, `/pets?ids=`, `/events`…): the tag of the page as sent (its items and its
 * `Link`), for `If-None-Match` on the same page only. Not a resource's tag: `If-Match` refuses it at compile time
 * (sent, it would never match, and the 412 would read as "changed").
 */
export type PageTag = string & { readonly [tagKind]: 'page' };
/**
 * What `If-Match` takes: a resource's tag (`ResourceTag`), or any string (`*`, a tag kept in your own storage), but
 * never a list page's `PageTag`.
 */
export type IfMatchValue = string & { readonly [tagKind]?: 'resource' };

/** The request headers of a call, with `If-Match` typed as `IfMatchValue` (a list page's tag refused). */
type RetaggedHeaders<Header> = Header extends object
  ? { [K in keyof Header]: K extends 'If-Match' ? IfMatchValue : Header[K] }
  : Header;
type RetaggedParams<Params> = Params extends object
  ? { [K in keyof Params]: K extends 'header' ? RetaggedHeaders<Params[K]> : Params[K] }
  : Params;
type Retagged<Init> = { [K in keyof Init]: K extends 'params' ? RetaggedParams<Init[K]> : Init[K] };

/**
 * The second argument of a call: openapi-fetch's (`params`, `body`, `headers`, `signal`…), exactly: a field the
 * operation does not have (`qty` for `quantity`) is a compile error in an object literal (openapi-fetch's own
 * signature adds `[key: string]: unknown`, which lets any through). `parseAs` is JSON only: the types say so.
 * `If-Match` takes a resource's tag, not a list page's (`IfMatchValue`).
 */
export type CallInit<P extends keyof paths, M extends Method> = Retagged<
  Exclude<MaybeOptionalInit<paths[P], M>, undefined>
> & {
  parseAs?: 'json';
};
type RequiredKeysOf<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
type InitArgs<Init> = RequiredKeysOf<Init> extends never ? [init?: Init] : [init: Init];

/** The GETs that answer 304 to `If-None-Match`. */
type RevalidatingPath = {
  [P in PathsWith<'get'>]: Operation<P, 'get'> extends { responses: { 304: unknown } } ? P : never;
}[PathsWith<'get'>];
/**
 * The init of a conditional GET: `If-None-Match` given, a tag or `undefined` (a tag you may not hold yet: sent
 * without the header, then it is the full answer), so a 304 may come back.
 */
type RevalidatingInit<P extends RevalidatingPath> = Omit<CallInit<P, 'get'>, 'params'> & {
  params: Omit<NonNullable<CallInit<P, 'get'>['params']>, 'header'> & {
    header: Omit<NonNullable<NonNullable<CallInit<P, 'get'>['params']>['header']>, 'If-None-Match'> & {
      'If-None-Match': string | undefined;
    };
  };
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
/**
 * The `ETag` a call's answer carries: a `PageTag` for a list's page (a 200 whose body is an array), a `ResourceTag`
 * where the operation's 2xx always carries one (single resources, their PUT/PATCH), else `null`.
 */
export type ETagOf<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { responses: { 200: { headers: { ETag: string } } } }
    ? Operation<P, M> extends { responses: { 200: { content: { 'application/json': unknown[] } } } }
      ? PageTag
      : ResourceTag
    : null;
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
  | {
      data: undefined;
      error?: never;
      response: Response;
      etag: ETagOf<P, 'get'> extends null ? string : ETagOf<P, 'get'>;
      notModified: true;
      idempotencyKey: undefined;
    };

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
   * events' feed (`order: 'commit'`, or `startingAfter` a saved position) yields `FeedEntry`s, each with the
   * `position` to save next. The last argument, `{ cache }`, revalidates the pages already seen (`ListOptions`).
   */
  list(path: '/events', query: FeedQuery, options?: ListOptions): AsyncGenerator<FeedEntry, void, undefined>;
  list<P extends ListPath>(path: P, ...args: ListArgs<P>): AsyncGenerator<ListItem<P>, void, undefined>;
  /**
   * Follows the events' commit-order feed without end: resumes after `after` (a position you saved), yields each
   * event (a `FeedEntry`: save its `position` once you applied it), and at the end of the feed asks again every
   * `pollIntervalMs` with `If-None-Match` (a 304 while nothing came: free). Failures wait and ask again (a 5xx, a
   * 429 after its `Retry-After`, no response: `onRetry` tells each wait); any other error (a bad position, a key
   * refused) ends the iteration with it. Stop with `break` or `signal`.
   */
  followEvents(options?: FollowEventsOptions): AsyncGenerator<FeedEntry, void, undefined>;
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

  // openapi-fetch types each path's call; the generic loops below speak to it untyped.
  const get = client.GET as unknown as (url: string, init: object) => Promise<{ data?: unknown; response: Response }>;
  const sleep = sleeper(options);

  async function* list(path: ListPath, ...args: unknown[]): AsyncGenerator<unknown, void, undefined> {
    // A list under a resource takes its path parameters before the options.
    const [query, pathParams, listOptions] = (path.includes('{') ? args : [args[0], undefined, args[1]]) as [
      object | undefined,
      object | undefined,
      ListOptions | undefined,
    ];
    const cache = listOptions?.cache;
    // The next pages go through the same client (key, retries, errors): the path, with the Link's query.
    let next: URL | null = null;
    do {
      const search: string | undefined = next?.search.slice(1);
      // The URL as sent (the cache's key) and the page held for it, read once the client has built the request.
      let sent = '';
      let held: CachedPage | undefined;
      const revalidate: Middleware = {
        async onRequest({ request }) {
          sent = request.url;
          held = await cache?.get(sent);
          if (held !== undefined) request.headers.set('If-None-Match', held.etag);
          return request;
        },
      };
      const { data, response } = await get(path, {
        params: search === undefined ? { query, path: pathParams } : { path: pathParams },
        ...(search === undefined ? {} : { querySerializer: () => search }),
        middleware: [revalidate],
        signal: listOptions?.signal,
      });
      if (response.status === 304 && held !== undefined) {
        // The page is still the one held (its items and its Link): a copy, so that the caller's changes stay theirs.
        yield* structuredClone(held.items);
        next = held.next === null ? null : new URL(held.next);
        continue;
      }
      const items = (data ?? []) as unknown[];
      next = nextPage(response, baseUrl);
      const etag = response.headers.get('etag');
      if (cache !== undefined && etag !== null) {
        await cache.set(sent, { etag, items: structuredClone(items), next: next?.href ?? null });
      }
      yield* items;
    } while (next);
  }

  async function* followEvents(follow: FollowEventsOptions = {}): AsyncGenerator<FeedEntry, void, undefined> {
    const { after, limit = 100, pollIntervalMs = 1000, maxBackoffMs = 60_000, signal, ...filters } = follow;
    const random = options.random ?? Math.random;
    let position = after;
    // The tag of an empty page at the end of the feed. A page's tag is made from what it sends (its items and its
    // Link), so an empty page has the same tag at any position: sent with the next ask, whatever the position, it
    // earns a 304 while nothing new came (free), and a 200 with the new events as soon as some did.
    let endTag: string | undefined;
    let failures = 0;
    const pause = async (ms: number) => {
      await sleep(ms, signal).catch(() => undefined);
      return !signal?.aborted;
    };
    while (!signal?.aborted) {
      let page: { data?: unknown; response: Response };
      try {
        const from = position === undefined ? { order: 'commit' } : { startingAfter: position };
        page = await get('/events', {
          params: { query: { ...filters, ...from, limit }, header: { 'If-None-Match': endTag } },
          signal,
        });
      } catch (error) {
        if (signal?.aborted) return;
        const delayMs = followBackoff(error, failures, maxBackoffMs, random);
        if (delayMs === undefined || !(error instanceof PetstoreApiError)) throw error;
        failures++;
        options.onRetry?.({
          attempt: failures,
          delayMs,
          method: 'GET',
          url: `${baseUrl}/events`,
          status: error.status,
          code: error.code,
          retryAfterMs: error.retryAfterMs,
          requestId: error.requestId,
          idempotencyKey: undefined,
        });
        if (!(await pause(delayMs))) return;
        continue;
      }
      failures = 0;
      const { data, response } = page;
      if (response.status !== 304) {
        const entries = (data ?? []) as FeedEntry[];
        for (const entry of entries) {
          yield entry;
          // Resumed: the caller has applied it.
          position = entry.position;
        }
        if (nextPage(response, baseUrl) !== null) continue;
        if (entries.length === 0) endTag = response.headers.get('etag') ?? undefined;
      }
      if (!(await pause(pollIntervalMs))) return;
    }
  }

  // The same openapi-fetch client: errorsAsExceptions makes every call that resolves a success, which is what the
  // narrower method types say.
  return Object.assign(client, { list, followEvents }) as unknown as PetstoreClient;
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
      {
        documentationUrl: documentationUrlOf(body, request.url),
        retryAfterMs: retryAfterMs(response.headers.get('retry-after')),
      },
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
  const sleep = sleeper(options);
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
        options.onRetry?.({
          attempt: answered + lost + 1,
          delayMs,
          method: request.method,
          url: request.url,
          status: 0,
          code: outcome.kind,
          retryAfterMs: undefined,
          requestId: null,
          idempotencyKey: key,
        });
        await sleep(delayMs, request.signal);
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
      options.onRetry?.({
        attempt: answered + lost + 1,
        delayMs,
        method: request.method,
        url: request.url,
        status: response.status,
        code: typeof code === 'string' ? code : 'http_error',
        retryAfterMs: askedMs,
        requestId: requestIdOf(response),
        idempotencyKey: key,
      });
      await response.body?.cancel();
      await sleep(delayMs, request.signal);
      waitedMs += delayMs;
      answered++;
    }
  };
}

/**
 * The client's waits: `options.sleep` (or a timer), ended early by the signal, whether or not `sleep` heeds it: then
 * the wait rejects with the signal's reason.
 */
function sleeper(options: PetstoreClientOptions): (ms: number, signal?: AbortSignal) => Promise<void> {
  const sleep =
    options.sleep ??
    ((ms: number, signal?: AbortSignal) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        signal?.addEventListener('abort', () => clearTimeout(timer), { once: true });
      }));
  return async (ms, signal) => {
    if (signal === undefined) return sleep(ms);
    signal.throwIfAborted();
    let onAbort = () => undefined as void;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      await Promise.race([sleep(ms, signal), aborted]);
    } finally {
      signal.removeEventListener('abort', onAbort);
      aborted.catch(() => undefined);
    }
  };
}

/**
 * How long `followEvents()` waits after a failed ask, or undefined when asking again cannot help (a 4xx other than
 * 408 and 429, or a 429 `too_many_auth_failures`). The answer's `Retry-After` when it has one (the client's own
 * retries did not wait for it: too long, or spent); else doubling from 1 s up to `maxMs`, between half and all of it
 * at random, so that followers cut off together do not come back together.
 */
function followBackoff(error: unknown, failures: number, maxMs: number, random: () => number): number | undefined {
  if (!(error instanceof PetstoreApiError)) return undefined;
  const transient =
    error.status === 0 ||
    error.status === 408 ||
    error.status >= 500 ||
    (error.status === 429 && !NOT_WORTH_WAITING.has(String(error.code)));
  if (!transient) return undefined;
  if (error.retryAfterMs !== undefined) return error.retryAfterMs;
  const ceiling = Math.min(maxMs, 1000 * 2 ** failures);
  return Math.round(ceiling * (0.5 + random() / 2));
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
