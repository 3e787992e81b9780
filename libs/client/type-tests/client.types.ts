// Type-level tests of @petstore/client (issue 33): each `@ts-expect-error` line must be an error, and each typed
// declaration must compile. libs/client/src/types.spec.ts runs tsc over this folder (its tsconfig.json is as strict as
// the strictest consumer: noUncheckedIndexedAccess, exactOptionalPropertyTypes, NodeNext).
import type { IncomingHttpHeaders } from 'node:http';
import {
  createPetstoreClient,
  PetstoreApiError,
  PetstoreConnectionError,
  verifyWebhook,
  type CachedPage,
  type ClientErrorCode,
  type EventLogEntry,
  type FeedEntry,
  type KnownErrorCode,
  type OperationErrorCode,
  type PageTag,
  type ResourceTag,
  type RetryNotice,
  type Schemas,
  type SubscribableEventType,
  type WebhookEventType,
  type components,
} from '../src/index.js';

// An option given as possibly undefined (an environment variable) compiles under exactOptionalPropertyTypes.
const api = createPetstoreClient({ baseUrl: 'http://localhost:3000', apiKey: process.env['PETSTORE_KEY'] });

/** 1. A conditional GET is a discriminated union: a 304 has no body, and the types say so. */
export async function conditionalGet(categoryId: number, tag: string): Promise<string> {
  const raw = await api.GET('/categories/{categoryId}', {
    params: { path: { categoryId }, header: { 'If-None-Match': tag } },
  });
  // @ts-expect-error a 304 has no body: `data` is undefined when notModified is true
  void raw.data.name;
  if (raw.notModified) {
    const nothing: undefined = raw.data;
    const stillTagged: string = raw.etag;
    void nothing;
    return stillTagged;
  }
  const name: string = raw.data.name;
  // Without If-None-Match there is no 304: the body, and `notModified` is false.
  const plain = await api.GET('/categories/{categoryId}', { params: { path: { categoryId } } });
  const never304: false = plain.notModified;
  void never304;
  return `${name} ${plain.data.name}`;
}

/** 3. `list()` takes only the paginated lists, with their path parameters. */
export async function lists(endpointId: number): Promise<number> {
  // @ts-expect-error the deliveries of an endpoint need its endpointId (a 400 otherwise)
  void api.list('/webhooks/endpoints/{endpointId}/deliveries', {});
  let attempts = 0;
  for await (const delivery of api.list('/webhooks/endpoints/{endpointId}/deliveries', {}, { endpointId })) {
    attempts += delivery.attempts;
  }
  return attempts;
}

/** 4. A request field with a default is optional (NewApiKey.scopes defaults to ['full']). */
export async function defaults(expiresAt: string): Promise<string> {
  const { data: key } = await api.POST('/accounts/me/api-keys', { body: { name: 'ci', expiresAt } });
  return key.key;
}

/** 8. Responses as the service sends them: an Order's id, quantity, complete always; its petId while placed. */
export async function orders(petId: number): Promise<number> {
  const { data: order } = await api.POST('/store/orders', { body: { petId, quantity: 1 } });
  const id: number = order.id;
  const quantity: number = order.quantity;
  const complete: boolean = order.complete;
  const total = id + quantity + Number(complete);
  if (order.status === 'placed') {
    const pet: number = order.petId;
    return total + pet;
  }
  return total;
}

/** 8. Misspelt fields are compile errors in object literals (request bodies, and the call's own options). */
export async function misspelt(petId: number): Promise<void> {
  // @ts-expect-error `shipdate` is not a field of NewOrder (it is `shipDate`)
  await api.POST('/store/orders', { body: { petId, quantity: 1, shipdate: '2026-12-01T00:00:00Z' } });
  // @ts-expect-error `parms` is not an option of a call (it is `params`)
  await api.GET('/pets', { parms: { query: { limit: 1 } } });
  // @ts-expect-error the client reads JSON: another `parseAs` would make `data` a string the types do not say
  await api.GET('/pets', { parseAs: 'text' });
}

/** 8. `etag` is a string where the service always sends one (single resources, their PATCH, lists), else null. */
export async function etags(petId: number): Promise<string> {
  const { data: pet, etag } = await api.GET('/pets/{petId}', { params: { path: { petId } } });
  const changed = await api.PATCH('/pets/{petId}', {
    params: { path: { petId }, header: { 'If-Match': etag } },
    body: { name: `${pet.name}!` },
  });
  // A list's page has its tag too (revalidate it with If-None-Match); an accepted message has none.
  const page: string = (await api.GET('/pets', { params: { query: { ids: [petId] } } })).etag;
  const accepted: null = (await api.POST('/messages', { body: { message: 'Hello' } })).etag;
  void [page, accepted];
  return changed.etag;
}

/** 5. The event log's entries are the union of the event types, with their id; verifyWebhook returns the id. */
export async function events(body: Buffer, headers: IncomingHttpHeaders, secret: string): Promise<string[]> {
  const seen: string[] = [];
  for await (const entry of api.list('/events')) {
    const logged: EventLogEntry = entry;
    if (logged.type === 'order.placed') {
      const orderId: number = logged.data.id;
      seen.push(`${logged.id}:${orderId}`);
    }
  }
  const { data: one } = await api.GET('/events/{eventId}', { params: { path: { eventId: 'e' } } });
  if (one.type === 'message.delivered') seen.push(one.data.message);
  const event = verifyWebhook(body, headers, secret);
  const eventId: string = event.id;
  seen.push(eventId);
  return seen;
}

/**
 * 3 (the feed). A consumer resumes the commit-order feed from the position it saved: `list()` takes it, and every
 * entry carries its own to save next.
 */
export async function catchUp(saved: string | undefined): Promise<string | undefined> {
  let position = saved;
  const query = position === undefined ? { order: 'commit' as const } : { startingAfter: position };
  for await (const entry of api.list('/events', { ...query, type: ['order.placed'], limit: 100 })) {
    if (entry.type === 'order.placed') void entry.data.petId;
    position = entry.position ?? position;
  }
  // @ts-expect-error -- the feed has two orders only
  void api.list('/events', { order: 'oldest' });
  // @ts-expect-error -- a position is a string (opaque), not the event's number
  void api.list('/events', { startingAfter: 42 });
  return position;
}

/** 8. Every code the client itself can produce is named (an exhaustive switch over the known ones compiles). */
export function describe(error: PetstoreApiError): string {
  const own: ClientErrorCode[] = ['http_error', 'empty_response', 'connection_error', 'timeout'];
  const code = error.code as KnownErrorCode | ClientErrorCode;
  switch (code) {
    case 'http_error':
    case 'empty_response':
      return 'not the API';
    case 'connection_error':
    case 'timeout':
      return `no response (${own.length} client codes)`;
    default:
      return code;
  }
}

/** 2. Safe retries: the options, a per-call key, and the key used on results and errors. */
export async function retries(petId: number): Promise<string | undefined> {
  const patient = createPetstoreClient({ baseUrl: 'http://localhost:3000', maxNetworkRetries: 4, timeoutMs: 10_000 });
  const placed = await patient.POST('/store/orders', {
    params: { header: { 'Idempotency-Key': 'order-of-the-day' } },
    body: { petId, quantity: 1 },
  });
  const key: string = placed.idempotencyKey;
  const read = await patient.GET('/store/orders/{orderId}', { params: { path: { orderId: placed.data.id } } });
  const none: undefined = read.idempotencyKey;
  void none;
  try {
    await patient.POST('/messages', { body: { message: 'hi' } });
  } catch (error) {
    if (error instanceof PetstoreConnectionError) return error.idempotencyKey;
    if (error instanceof PetstoreApiError) return error.idempotencyKey;
  }
  return key;
}

/** `Schemas` are the response shapes: `Schemas['Order']` has its id. */
export const orderId = (order: Schemas['Order']): number => order.id;

/** Issue 49: `If-None-Match` with a tag you may not hold yet (`string | undefined`), exactOptionalPropertyTypes. */
export async function revalidateMaybe(petId: number, tag: string | undefined): Promise<string> {
  const read = await api.GET('/pets/{petId}', { params: { path: { petId }, header: { 'If-None-Match': tag } } });
  const page = await api.GET('/pets', { params: { query: { limit: 5 }, header: { 'If-None-Match': tag } } });
  if (read.notModified || page.notModified) return read.etag;
  return read.data.name;
}

/** Issue 49: a list page's tag is a `PageTag`, a resource's a `ResourceTag`; `If-Match` refuses the page's. */
export async function brandedTags(petId: number, stored: string): Promise<void> {
  const { data: pets, etag: pageTag } = await api.GET('/pets', { params: { query: { ids: [petId] } } });
  const page: PageTag = pageTag;
  // @ts-expect-error a list page's tag is not a resource's: sent as If-Match it would never match (a 412)
  const notAResource: ResourceTag = pageTag;
  void [page, notAResource, pets];
  // @ts-expect-error If-Match takes the pet's own tag (GET /pets/{petId}, or the PATCH answer), not the page's
  await api.PATCH('/pets/{petId}', {
    params: { path: { petId }, header: { 'If-Match': pageTag } },
    body: { name: 'Rex' },
  });
  const { etag } = await api.GET('/pets/{petId}', { params: { path: { petId } } });
  const resource: ResourceTag = etag;
  const deleted = await api.DELETE('/pets/{petId}', { params: { path: { petId }, header: { 'If-Match': resource } } });
  void deleted;
  // A tag kept in your own storage (a plain string) and `*` are still accepted.
  await api.PATCH('/pets/{petId}', {
    params: { path: { petId }, header: { 'If-Match': stored } },
    body: { name: 'A' },
  });
  await api.PATCH('/pets/{petId}', { params: { path: { petId }, header: { 'If-Match': '*' } }, body: { name: 'B' } });
  // A page's tag still revalidates its page.
  const again = await api.GET('/pets', { params: { query: { ids: [petId] }, header: { 'If-None-Match': pageTag } } });
  void again;
}

/** Issue 49: what an endpoint subscribes to has no `ping`; what it receives may be one. */
export async function subscriptions(url: string, received: WebhookEventType): Promise<void> {
  const events: SubscribableEventType[] = ['order.placed', 'inventory.changed'];
  await api.POST('/webhooks/endpoints', { body: { url, events } });
  // @ts-expect-error an endpoint's events refuse `ping` (a 400): pings are sent by POST …/test, not subscribed to
  const withPing: SubscribableEventType[] = ['order.placed', 'ping'];
  const delivered: WebhookEventType[] = [received, 'ping'];
  // @ts-expect-error a received type may be `ping`, which an endpoint cannot subscribe to
  await api.POST('/webhooks/endpoints', { body: { url, events: delivered } });
  const same: components['schemas']['EventType'][] = events;
  const back: SubscribableEventType[] = same;
  void [withPing, back];
  for await (const entry of api.list('/events', { type: events })) void entry.type;
}

/** Issue 49: the commit-order feed's entries always have their `position` (`FeedEntry`); newest-first ones may not. */
export async function feedPositions(saved: string): Promise<string> {
  let position = saved;
  for await (const entry of api.list('/events', { startingAfter: saved, limit: 100 })) {
    const feed: FeedEntry = entry;
    position = feed.position;
  }
  for await (const entry of api.list('/events', { order: 'commit' })) position = entry.position;
  for await (const entry of api.list('/events')) {
    // @ts-expect-error the newest-first list shows a position only once the event is settled: it may be absent
    position = entry.position;
    const logged: EventLogEntry = entry;
    void logged;
  }
  for await (const entry of api.followEvents({ after: saved, type: ['order.placed'], pollIntervalMs: 500 })) {
    if (entry.type === 'order.placed') void entry.data.petId;
    position = entry.position;
    break;
  }
  return position;
}

/** Issue 49: `list()` revalidates with a cache of pages; `onRetry` sees every wait. */
export async function revalidatingList(): Promise<number> {
  const notices: RetryNotice[] = [];
  const watched = createPetstoreClient({
    baseUrl: 'http://localhost:3000',
    onRetry: (retry) => void notices.push(retry),
  });
  const cache = new Map<string, CachedPage>();
  let count = 0;
  for await (const pet of watched.list('/pets', { status: ['available'] }, { cache })) count += pet.id;
  for await (const d of watched.list('/webhooks/endpoints/{endpointId}/deliveries', {}, { endpointId: 1 }, { cache }))
    count += d.attempts;
  // @ts-expect-error the options come after the path parameters of a list under a resource
  void watched.list('/webhooks/endpoints/{endpointId}/deliveries', {}, { cache });
  const waited: number = notices.reduce((total, notice) => total + notice.delayMs, 0);
  return count + waited;
}

/** Issue 49: a recovery after an outage takes `since` (and `all`), answers how many were queued and where to go on. */
export async function recovery(endpointId: number, since: string): Promise<number> {
  const path = { endpointId };
  let { data } = await api.POST('/webhooks/endpoints/{endpointId}/recover', { params: { path }, body: { since } });
  let queued = data.queued;
  while (data.nextSince !== undefined) {
    const body = { since: data.nextSince, all: true };
    ({ data } = await api.POST('/webhooks/endpoints/{endpointId}/recover', { params: { path }, body }));
    queued += data.queued;
  }
  // @ts-expect-error `since` is required: a recovery says from when
  await api.POST('/webhooks/endpoints/{endpointId}/recover', { params: { path }, body: { all: true } });
  const refused: OperationErrorCode<'/webhooks/endpoints/{endpointId}/recover', 'post'> = 'webhook_delivery_off';
  void refused;
  return queued;
}
