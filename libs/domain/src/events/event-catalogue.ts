import type { Category } from '../category/category';
import type { Message } from '../message/message';
import type { Order } from '../order/order';
import type { Pet } from '../pet/pet';
import type { PetStatus } from '../pet/pet-status';

/*
 * The event catalogue: every type of fact the store records, declared here once. Everything else about an event type
 * follows from its definition: the recorder's types (what `record(type, subject)` takes), whose resource it is and
 * who may see and receive it, its `data` (the subject's API view), its schema and description in the OpenAPI
 * description, the webhook subscription's list, the fakes. A new event type is its definition here plus the code
 * that records it; anything else that must change does not compile until it does.
 */

/** A pet's stock as its event reports it (the stock's StockLevel, without importing the catalogue's application). */
export interface StockSubject {
  petId: number;
  quantity: number;
  status: PetStatus;
  /** The entry's version after the change (Stock.version). */
  version: number;
}

/**
 * What an event may be about, by the name of the API schema its `data` follows (its payload schema): the API shows
 * each kind one way (EventSubjectViews), so an event's `data` is the resource exactly as the API's responses show it.
 */
export interface EventSubjectKinds {
  Order: Order;
  Pet: Pet;
  Category: Category;
  InventoryItem: StockSubject;
  Message: Message;
}
export type EventSubjectKind = keyof EventSubjectKinds;

/**
 * Who sees an event in `GET /events` and may receive it by webhook (WebhookAudience applies it):
 * - `everyone`: the catalogue's (the store's pets, categories and stock, which every account may read): every account
 *   sees it and may subscribe to it; recorded under subject owner EVERY_ACCOUNT;
 * - `customer`: about an account's resource: that account, and every administrator (an order);
 * - `account`: about an account's resource: that account alone receives it (administrators see it in the log);
 * - `administrators`: about the store's own resource, administrators only (recorded under no subject owner).
 */
export type EventAudience = 'everyone' | 'customer' | 'account' | 'administrators';

/** The slices that record events: the one that owns an event type records it (the check: events-declared-once). */
export type EventOwner = 'catalogue' | 'ordering' | 'messaging';

/** One event type's definition; an audience about an account's resource needs a subject that has an owner. */
export type EventDefinition = {
  [K in EventSubjectKind]: {
    /** What the event is about, named by its payload schema: `data` is this resource as the API shows it. */
    readonly subject: K;
    readonly audience: EventSubjectKinds[K] extends { ownerId: number }
      ? EventAudience
      : Exclude<EventAudience, 'customer' | 'account'>;
    /** The slice that records it. */
    readonly owner: EventOwner;
    /** When it is sent, in the OpenAPI description's words (the audience's sentence is added to it). */
    readonly description: string;
  };
}[EventSubjectKind];

/**
 * Every event type, in the order the API lists them (the subscription's enum, the description's schemas). Its keys
 * are the event types: nowhere else is one spelled out but where it is recorded.
 */
export const EVENT_CATALOGUE = {
  'order.placed': {
    subject: 'Order',
    audience: 'customer',
    owner: 'ordering',
    description: 'An order was placed (`POST /store/orders`); `status` `placed`.',
  },
  'order.completed': {
    subject: 'Order',
    audience: 'customer',
    owner: 'ordering',
    description: 'An administrator completed an order (`PATCH /store/orders/{orderId}`).',
  },
  'order.cancelled': {
    subject: 'Order',
    audience: 'customer',
    owner: 'ordering',
    description:
      'An order was cancelled: by its owner or an administrator (`DELETE /store/orders/{orderId}`), or by the ' +
      'service when its hold expired (`ORDER_HOLD_MINUTES`); `data` is the order as it is now, `status` `cancelled` ' +
      'or `expired`.',
  },
  'pet.status_changed': {
    subject: 'Pet',
    audience: 'administrators',
    owner: 'catalogue',
    description:
      "A pet's status changed, by hand (`PATCH /pets/{petId}`) or through its stock (an order placed, completed " +
      'or cancelled, `PUT /store/inventory/{petId}`); `data` has the new status. Administrators only.',
  },
  'message.delivered': {
    subject: 'Message',
    audience: 'account',
    owner: 'messaging',
    description: 'A message (`POST /messages`) was delivered.',
  },
  'pet.created': {
    subject: 'Pet',
    audience: 'everyone',
    owner: 'catalogue',
    description: 'A pet was created (`POST /pets`); an `inventory.changed` with its first stock follows.',
  },
  'pet.updated': {
    subject: 'Pet',
    audience: 'everyone',
    owner: 'catalogue',
    description:
      "A pet's name, category or status changed: by hand (`PATCH /pets/{petId}`) or through its stock (an order " +
      'placed, completed or cancelled, `PUT /store/inventory/{petId}`); `data` is the pet as it is now. An update ' +
      'that changes nothing sends nothing.',
  },
  'pet.deleted': {
    subject: 'Pet',
    audience: 'everyone',
    owner: 'catalogue',
    description: 'A pet was deleted (`DELETE /pets/{petId}`), its stock with it; `data` is the pet as it was.',
  },
  'category.created': {
    subject: 'Category',
    audience: 'everyone',
    owner: 'catalogue',
    description: 'A category was created (`POST /categories`).',
  },
  'category.updated': {
    subject: 'Category',
    audience: 'everyone',
    owner: 'catalogue',
    description:
      "A category's name or description changed (`PATCH /categories/{categoryId}`); `data` is the category as it " +
      'is now. An update that changes nothing sends nothing.',
  },
  'category.deleted': {
    subject: 'Category',
    audience: 'everyone',
    owner: 'catalogue',
    description: 'A category was deleted (`DELETE /categories/{categoryId}`); `data` is the category as it was.',
  },
  'inventory.changed': {
    subject: 'InventoryItem',
    audience: 'everyone',
    owner: 'catalogue',
    description:
      "A pet's stock count or status changed: set by an administrator (`PUT /store/inventory/{petId}`, " +
      "`PATCH /pets/{petId}`), taken or given back by an order (placed, cancelled, expired), or a new pet's first " +
      'stock; `data` is the entry as it is now. Setting the same count sends nothing.',
  },
} as const satisfies Record<string, EventDefinition>;

/** An event type: a key of the catalogue. */
export type EventType = keyof typeof EVENT_CATALOGUE;

/** Every event type, in the catalogue's order. */
export const EVENT_TYPES = Object.keys(EVENT_CATALOGUE) as readonly EventType[];

/** The definition of one event type. */
export function eventDefinition(type: EventType): EventDefinition {
  return EVENT_CATALOGUE[type];
}

/** The kind of subject an event type is about (`subject` of its definition). */
export type EventSubjectKindOf<T extends EventType> = (typeof EVENT_CATALOGUE)[T]['subject'];

/** What each event type is about: the aggregate (or stock entry) a use case records it with. */
export type EventSubjects = { [T in EventType]: EventSubjectKinds[EventSubjectKindOf<T>] };

/** The event types of one audience, or of one owner, in the catalogue's order. */
export function eventTypesWhere(match: Partial<Pick<EventDefinition, 'audience' | 'owner' | 'subject'>>): EventType[] {
  return EVENT_TYPES.filter((type) => {
    const definition = eventDefinition(type);
    return (
      (match.audience === undefined || definition.audience === match.audience) &&
      (match.owner === undefined || definition.owner === match.owner) &&
      (match.subject === undefined || definition.subject === match.subject)
    );
  });
}

/** Whether `type` is an event type of the catalogue (input from a request, a stored row). */
export function isEventType(type: string): type is EventType {
  return Object.hasOwn(EVENT_CATALOGUE, type);
}
