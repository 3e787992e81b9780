import createClient, { type Client, type FetchResponse, type MaybeOptionalInit, type Middleware } from 'openapi-fetch';
import type { components, paths } from './generated/schema.js';
import { type ErrorCode } from './error-codes.js';

export type Schemas = components['schemas'];
export type ApiErrorBody = Schemas['Error'];

export interface PetstoreClientOptions {
  /** Where the API answers, e.g. `https://petstore.example.com` (no trailing path). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`; omit for the public operations (sign-up, health). */
  apiKey?: string;
  /** Retries of a request answered 429 or 503 (default 3), each after its `Retry-After`. */
  retries?: number;
  /** A `Retry-After` longer than this (default 60 s) is not waited for: the 429/503 is returned as an error. */
  maxRetryDelayMs?: number;
  /**
   * The most one call waits in all its retries (default 60 s): a retry whose wait would take the total past it is
   * not made, and the last 429/503 is the error.
   */
  maxTotalRetryMs?: number;
  /** The key of a POST that gives none (default: a random UUID). */
  idempotencyKey?: () => string;
  /** Default: the global fetch. */
  fetch?: (request: Request) => Promise<Response>;
  /** How to wait between retries (default: a timer); tests may record the delays instead. */
  sleep?: (ms: number) => Promise<void>;
  /** A number in [0, 1): the jitter of a retry after 503 `overloaded` (default: Math.random); tests fix it. */
  random?: () => number;
}

/** A response other than 2xx, after the retries: the API's `Error` body with the request id to quote. */
export class PetstoreApiError extends Error {
  override readonly name = 'PetstoreApiError';

  constructor(
    readonly status: number,
    /** One of the codes the API documents (`ErrorCode`), or a newer one this version of the client does not know. */
    readonly code: ErrorCode,
    message: string,
    /** The `X-Request-Id` of the response: the server logged the failure under it. */
    readonly requestId: string | null,
    readonly details: ApiErrorBody['details'] = undefined,
  ) {
    super(message);
  }
}

/** The paths whose GET answers a JSON array (the paginated lists). */
export type ListPath = {
  [P in keyof paths]: paths[P] extends { get: { responses: { 200: { content: { 'application/json': unknown[] } } } } }
    ? P
    : never;
}[keyof paths];
/** One item of a list path's array. */
export type ListItem<P extends ListPath> = paths[P] extends {
  get: { responses: { 200: { content: { 'application/json': Array<infer Item> } } } };
}
  ? Item
  : never;
/** The query parameters of a list path (without `cursor`, which the iterator follows). */
export type ListQuery<P extends ListPath> = paths[P] extends { get: { parameters: { query?: infer Query } } }
  ? Omit<NonNullable<Query>, 'cursor'>
  : never;

type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';
/** The paths that have an operation for the method (openapi-typescript writes `get?: never` for the others). */
type PathsWith<M extends Method> = {
  [P in keyof paths]: paths[P] extends { [K in M]: object } ? P : never;
}[keyof paths];
type RequiredKeysOf<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
/** The second argument of a call: required when the operation has a required parameter or body (as openapi-fetch). */
type InitParam<Init> =
  RequiredKeysOf<Init> extends never ? [(Init & { [key: string]: unknown })?] : [Init & { [key: string]: unknown }];

/**
 * What a call resolves to: only ever openapi-fetch's success branch, since every non-2xx answer rejects with a
 * PetstoreApiError (but a 304, below). So `data` is the operation's body type (not `T | undefined`), and no `unwrap`
 * is needed.
 */
export type Success<R> = R extends { data: infer Data; response: Response }
  ? { data: Data; error?: never; response: Response } & Conditional
  : never;

/**
 * Conditional requests (the API's `ETag`, `If-None-Match`, `If-Match`), on every result:
 * - `etag`: the entity tag of the resource the response carries (single resources), else null. Send it back as
 *   `params: { header: { 'If-Match': etag } }` on a PUT/PATCH/DELETE to change the resource only if nobody changed
 *   it since (else a PetstoreApiError 412 `precondition_failed`), or as `'If-None-Match'` on the GET to revalidate;
 * - `notModified`: true when such a GET was answered 304: the resource is still the one you hold, `data` is then
 *   undefined (there is no body), and the request did not count against the rate limit.
 */
export interface Conditional {
  etag: string | null;
  notModified: boolean;
}

/** One HTTP method of the client: openapi-fetch's signature, resolving to the success branch only. */
export type SucceedingMethod<M extends Method> = <
  Path extends PathsWith<M>,
  Init extends MaybeOptionalInit<paths[Path], M>,
>(
  url: Path,
  ...init: InitParam<Init>
) => Promise<
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- openapi-fetch's own constraint of an operation
  paths[Path][M] extends infer Op extends Record<string | number, any>
    ? Success<FetchResponse<Op, Init, 'application/json'>>
    : never
>;

export type PetstoreClient = Omit<Client<paths, 'application/json'>, 'GET' | 'PUT' | 'POST' | 'DELETE' | 'PATCH'> & {
  /** `const { data: pet } = await api.GET('/pets/{petId}', …)`: `data` is the body; a non-2xx rejects. */
  GET: SucceedingMethod<'get'>;
  PUT: SucceedingMethod<'put'>;
  POST: SucceedingMethod<'post'>;
  DELETE: SucceedingMethod<'delete'>;
  PATCH: SucceedingMethod<'patch'>;
  /**
   * Every item of a list, page after page: follows `Link: <…>; rel="next"` until there is none.
   * `for await (const pet of api.list('/pets', { status: ['available'] })) …`
   */
  list<P extends ListPath>(path: P, query?: ListQuery<P>): AsyncGenerator<ListItem<P>, void, undefined>;
};

const RETRIED_STATUSES = new Set([429, 503]);
/** 429 codes no wait can cure: the credentials did not authenticate (the API's failed-authentication budget). */
const NOT_WORTH_WAITING = new Set<string>(['too_many_auth_failures']);

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
  client.use(authAndIdempotency(options), errorsAsExceptions);
  for (const method of ['GET', 'PUT', 'POST', 'DELETE', 'PATCH'] as const) {
    const call = client[method] as (...args: unknown[]) => Promise<{ response: Response }>;
    Object.assign(client, {
      [method]: (...args: unknown[]) => call(...args).then((result) => Object.assign(result, conditionalOf(result))),
    });
  }

  async function* list<P extends ListPath>(
    path: P,
    query?: ListQuery<P>,
  ): AsyncGenerator<ListItem<P>, void, undefined> {
    // openapi-fetch types each path's call; this one generic loop over them speaks to it untyped.
    // The next pages go through the same client (key, retries, errors): the path, with the Link's query.
    const get = client.GET as unknown as (url: string, init: object) => Promise<{ data?: unknown; response: Response }>;
    let next: URL | null = null;
    do {
      const search: string | undefined = next?.search.slice(1);
      const { data, response } = await get(
        path,
        search === undefined ? { params: { query } } : { querySerializer: () => search },
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
 * its operation documents rejects.
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

/** The body type of openapi-fetch's success branch (`{ data; error?: never }`). */
export type SuccessData<R> = R extends { data: infer Data; error?: never } ? Exclude<Data, undefined> : never;

function authAndIdempotency(options: PetstoreClientOptions): Middleware {
  const newKey = options.idempotencyKey ?? (() => globalThis.crypto.randomUUID());
  return {
    onRequest({ request }) {
      if (options.apiKey && !request.headers.has('authorization'))
        request.headers.set('Authorization', `Bearer ${options.apiKey}`);
      // Every POST gets a key, so that a retry (here or by the caller with the same key) is never applied twice.
      // The operations that do not take one ignore it.
      if (request.method === 'POST' && !request.headers.has('idempotency-key'))
        request.headers.set('Idempotency-Key', newKey());
      return request;
    },
  };
}

/** The `ETag` of a response and whether it is a 304 (`Conditional`). */
export function conditionalOf(result: { response: Response }): Conditional {
  return { etag: result.response.headers.get('etag'), notModified: result.response.status === 304 };
}

const errorsAsExceptions: Middleware = {
  async onResponse({ response }) {
    // A 304 answers a GET sent with If-None-Match: the resource did not change, which is not an error.
    if (response.ok || response.status === 304) return response;
    const body = await errorBodyOf(response);
    throw new PetstoreApiError(
      response.status,
      typeof body?.code === 'string' ? body.code : 'http_error',
      typeof body?.message === 'string' ? body.message : `HTTP ${response.status}`,
      requestIdOf(response),
      body?.details,
    );
  },
};

async function errorBodyOf(response: Response): Promise<Partial<ApiErrorBody> | undefined> {
  return (await response
    .clone()
    .json()
    .catch(() => undefined)) as Partial<ApiErrorBody> | undefined;
}

/**
 * Answers 429 and 503 again after their `Retry-After`, with the same request (so the same Idempotency-Key), as long
 * as waiting can help: not past `retries`, not a wait over `maxRetryDelayMs`, not a total over `maxTotalRetryMs`,
 * and not a 429 whose code says no wait cures it (too many failed authentications: the key is wrong), nor a 503
 * `outcome_unknown` sent without an Idempotency-Key (the write may have been done: sending it again could do it twice).
 * A 503 `overloaded` (the instance's admission limit refused it, nothing done) is retried after its `Retry-After`
 * plus up to as much again at random: the clients refused together must not all come back in the same instant.
 */
function retrying(fetchOnce: (request: Request) => Promise<Response>, options: PetstoreClientOptions) {
  const retries = options.retries ?? 3;
  const maxDelayMs = options.maxRetryDelayMs ?? 60_000;
  const maxTotalMs = options.maxTotalRetryMs ?? 60_000;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const random = options.random ?? Math.random;
  return async (request: Request): Promise<Response> => {
    let waitedMs = 0;
    for (let attempt = 0; ; attempt++) {
      const response = await fetchOnce(request.clone());
      if (attempt >= retries || !RETRIED_STATUSES.has(response.status)) return response;
      const askedMs = retryAfterMs(response.headers.get('retry-after')) ?? 2 ** attempt * 1000;
      if (askedMs > maxDelayMs) return response;
      const overloaded = response.status === 503 && (await errorBodyOf(response))?.code === 'overloaded';
      // Never sooner than asked; jittered up to twice that, within the total budget.
      const delayMs = overloaded
        ? Math.min(Math.round(askedMs * (1 + random())), Math.max(askedMs, maxTotalMs - waitedMs))
        : askedMs;
      if (waitedMs + delayMs > maxTotalMs) return response;
      if (response.status === 429 && NOT_WORTH_WAITING.has(String((await errorBodyOf(response))?.code))) {
        return response;
      }
      // A write that may have been done: sent again only with its Idempotency-Key (which replays it if it was).
      if (
        response.status === 503 &&
        !request.headers.has('idempotency-key') &&
        (await errorBodyOf(response))?.code === 'outcome_unknown'
      ) {
        return response;
      }
      await response.body?.cancel();
      await sleep(delayMs);
      waitedMs += delayMs;
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
    const match = /^\s*<([^>]*)>(.*)$/.exec(link);
    if (match && /;\s*rel="?([^";]*\s)?next(\s[^";]*)?"?\s*(;|$)/i.test(match[2]))
      return new URL(match[1], response.url || baseUrl);
  }
  return null;
}

function requestIdOf(response: Response): string | null {
  return response.headers.get('x-request-id');
}
