import type { components } from './generated/schema.js';

type Described = components['schemas'];

/**
 * How the response types are reconciled with the specification. docs/openapi.json keeps the Swagger Petstore's
 * `Order` as it was (every field but `status` optional: a third party's generated client relies on that), but this
 * service always sends `id`, `quantity` and `complete`, and `petId` on every `placed` order (the database's
 * `orders_open_has_pet_ck`: only a closed order whose pet was deleted has none; `OrderDto.from` omits a null one).
 * The client's response types say exactly that: `Sent<T>` replaces each described schema below, wherever it occurs
 * in a response (nested, in arrays, in events), by the shape this service sends. Request bodies are the described
 * schemas, untouched. apps/api/test/quickstart-client.e2e.spec.ts checks the service's orders against the list.
 */
export type SentOrder = Omit<Described['Order'], 'id' | 'petId' | 'quantity' | 'complete' | 'status'> & {
  id: number;
  quantity: number;
  complete: boolean;
} & ({ status: 'placed'; petId: number } | { status: Exclude<Described['OrderStatus'], 'placed'>; petId?: number });

/** The `Order` fields the service always sends (whatever the status): the runtime list behind `SentOrder`. */
export const ORDER_FIELDS_ALWAYS_SENT = [
  'id',
  'quantity',
  'complete',
  'status',
  'createdAt',
  'statusChangedAt',
] as const;

/** An event the service POSTs to webhook endpoints, with its `Order`s as sent (`WebhookEvent` in the description). */
export type SentWebhookEvent = Sent<Described['WebhookEvent']>;

/**
 * An entry of the event log (`GET /events`, `GET /events/{eventId}`): the description's `EventLogEntry` types its
 * `data` as any object, but the entry is exactly the webhook body of its event (`type`, `timestamp`, `data`) plus
 * `id`, the `webhook-id` of its deliveries, and its `position` in the commit-order feed once settled. So: the union
 * of the event types (pings are never logged), discriminated by `type`, each with its `id` and `position`.
 */
export type EventLogEntry =
  Exclude<SentWebhookEvent, { type: 'ping' }> extends infer Event
    ? Event extends unknown
      ? { id: Described['EventLogEntry']['id']; position?: Described['EventLogEntry']['position'] } & Event
      : never
    : never;

/**
 * An entry of the commit-order feed (`GET /events?order=commit`, or `startingAfter`/`endingBefore`): an
 * `EventLogEntry` whose `position` is always there (the feed lists only settled events). `list('/events', { order:
 * 'commit' })` and `followEvents()` yield these: save `position` once the event is applied, resume after it.
 */
export type FeedEntry = EventLogEntry extends infer Entry
  ? Entry extends unknown
    ? Omit<Entry, 'position'> & { position: string }
    : never
  : never;

/** Whether two types are the same type (not merely assignable either way). */
type Same<A, B> = (<G>() => G extends A ? 1 : 2) extends <G>() => G extends B ? 1 : 2 ? true : false;

type SentOne<T> =
  Same<T, Described['Order']> extends true
    ? SentOrder
    : Same<T, Described['EventLogEntry']> extends true
      ? EventLogEntry
      : T extends readonly (infer Item)[]
        ? Sent<Item>[]
        : T extends object
          ? { [K in keyof T]: Sent<T[K]> }
          : T;

/** A response body as this service sends it: the described type with `SentOrder` and `EventLogEntry` in place. */
export type Sent<T> = T extends unknown ? SentOne<T> : never;

/** The schemas of the description as they come in responses (`Schemas['Order']` is `SentOrder`). */
export type Schemas = { [Name in keyof Described]: Sent<Described[Name]> };
