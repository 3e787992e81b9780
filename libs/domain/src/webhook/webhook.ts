import { LIMITS } from '../common/limits';
import { InvalidValueError } from '../common/domain-error';
import { newId } from '../common/identity';
import { eventDefinition, EventType, EVENT_TYPES, eventTypesWhere, isEventType } from '../events/event-catalogue';

/** The events an endpoint may subscribe to: every event type of the catalogue (EVENT_CATALOGUE). */
export const WEBHOOK_EVENT_TYPES: readonly EventType[] = EVENT_TYPES;
export type WebhookEventType = EventType;

/**
 * The catalogue's events (audience `everyone`): about the store's pets, categories and stock, which every account may
 * read (`GET /pets`…), so every account sees them in `GET /events` and may subscribe to them (a storefront follows the
 * catalogue with them). Recorded under subject owner 0 (EVERY_ACCOUNT), which no account has.
 */
export const CATALOGUE_EVENT_TYPES: readonly EventType[] = eventTypesWhere({ audience: 'everyone' });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An event's id is a UUID (the `webhook-id` header), in any letter case. */
export function isEventId(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

/** Sent only by `POST /webhooks/endpoints/{id}/test`, to that endpoint; never subscribed to. */
export const WEBHOOK_PING = 'ping';

/** Whether every account may see and receive events of this type (the catalogue's). */
export function isCatalogueEvent(type: string): boolean {
  return isEventType(type) && eventDefinition(type).audience === 'everyone';
}

/** Who may receive what (the one place that says it), by each event type's audience (EventAudience). */
export const WebhookAudience = {
  /** Whether an account with this role may subscribe to the event type at all. */
  maySubscribe(type: WebhookEventType, ownerIsAdmin: boolean): boolean {
    return ownerIsAdmin || eventDefinition(type).audience !== 'administrators';
  },

  /**
   * Whether `viewer` sees a logged event in `GET /events` (as its endpoints would receive it): its own resources'
   * events and the catalogue's; an administrator every event.
   */
  sees(viewer: { id: number; isAdmin: boolean }, type: WebhookEventType, subjectOwnerId: number | null): boolean {
    return viewer.isAdmin || isCatalogueEvent(type) || (subjectOwnerId !== null && subjectOwnerId === viewer.id);
  },

  /**
   * Whether an endpoint of `owner` receives an event about a resource of `subjectOwnerId` (null:
   * a resource of the store, such as a pet). A customer receives the events of its own orders and
   * messages and the catalogue's events; an administrator also every order's events (audience `customer`) and the
   * store's own (audience `administrators`: the pets' status changes).
   */
  receives(owner: { id: number; isAdmin: boolean }, type: WebhookEventType, subjectOwnerId: number | null): boolean {
    const { audience } = eventDefinition(type);
    if (audience === 'everyone') return true;
    if (subjectOwnerId !== null && subjectOwnerId === owner.id) return true;
    if (!owner.isAdmin) return false;
    return audience === 'customer' || audience === 'administrators';
  },
};

export interface WebhookEndpointProps {
  id: number;
  ownerId: number;
  url: string;
  events: WebhookEventType[];
  /** `whsec_` + base64 of the key; kept to sign, shown once. */
  secret: string;
  createdAt: Date;
  /**
   * Set once every delivery failed for 5 days, or when its owner disables it; a disabled endpoint receives
   * nothing more until it is enabled again.
   */
  disabledAt: Date | null;
  /** The secret before the last rotation: it still signs every delivery, beside `secret`, until its expiry. */
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
}

/** What signs a delivery at `now`: the secret, then the previous one while its rotation window lasts. */
export function signingSecrets(
  keys: Pick<WebhookEndpointProps, 'secret' | 'previousSecret' | 'previousSecretExpiresAt'>,
  now: Date,
): string[] {
  const { secret, previousSecret, previousSecretExpiresAt } = keys;
  const previousValid = previousSecret !== null && previousSecretExpiresAt !== null && previousSecretExpiresAt > now;
  return previousValid ? [secret, previousSecret] : [secret];
}

/** What `PATCH /webhooks/endpoints/{id}` may change; what is left out stays as it is. */
export interface WebhookEndpointChange {
  url?: string;
  events?: readonly string[];
  /** true enables a disabled endpoint again; false disables it (until enabled again). */
  enabled?: boolean;
}

function checkedEvents(input: readonly string[], ownerIsAdmin: boolean): WebhookEventType[] {
  if (input.length === 0) throw new InvalidValueError('events', 'events must name at least one event type.');
  const events = [...new Set(input)];
  for (const type of events) {
    if (!isEventType(type)) {
      throw new InvalidValueError('events', `events: "${type}" is not one of ${WEBHOOK_EVENT_TYPES.join(', ')}.`);
    }
    if (!WebhookAudience.maySubscribe(type, ownerIsAdmin)) {
      throw new InvalidValueError('events', `events: only an administrator may subscribe to "${type}".`);
    }
  }
  return events as WebhookEventType[];
}

function checkedUrl(url: string): string {
  if (url.length > LIMITS.webhookUrl.max) {
    throw new InvalidValueError('url', `url must be at most ${LIMITS.webhookUrl.max} characters.`);
  }
  return url;
}

/**
 * Whether two endpoint URLs are the same receiver: compared as parsed (the host's case, a default port, percent-case
 * are not a new receiver), or as written when one does not parse. An account has one endpoint per URL.
 */
export function sameWebhookUrl(a: string, b: string): boolean {
  return webhookUrlKey(a) === webhookUrlKey(b);
}

/** The URL as `sameWebhookUrl` compares it. */
export function webhookUrlKey(url: string): string {
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
}

/** A URL where an account receives the events it subscribed to, signed with the endpoint's secret. */
export class WebhookEndpoint {
  private constructor(private readonly props: WebhookEndpointProps) {}

  /** A new endpoint, with the id `WebhookEndpointRepository.nextId()` gave. */
  static create(input: {
    id: number;
    ownerId: number;
    ownerIsAdmin: boolean;
    url: string;
    events: readonly string[];
    secret: string;
    now: Date;
  }): WebhookEndpoint {
    return new WebhookEndpoint({
      id: newId(input.id),
      ownerId: input.ownerId,
      url: checkedUrl(input.url),
      events: checkedEvents(input.events, input.ownerIsAdmin),
      secret: input.secret,
      createdAt: input.now,
      disabledAt: null,
      previousSecret: null,
      previousSecretExpiresAt: null,
    });
  }

  /**
   * The endpoint with `change` applied, by the rules of creation (`ownerIsAdmin`: the owner's role, whoever
   * edits). Enabling a disabled endpoint clears `disabledAt`; disabling an enabled one sets it to `now`.
   */
  change(change: WebhookEndpointChange, ownerIsAdmin: boolean, now: Date): WebhookEndpoint {
    const next = { ...this.props, events: [...this.props.events] };
    if (change.url !== undefined) next.url = checkedUrl(change.url);
    if (change.events !== undefined) next.events = checkedEvents(change.events, ownerIsAdmin);
    if (change.enabled === true) next.disabledAt = null;
    if (change.enabled === false) next.disabledAt ??= now;
    return new WebhookEndpoint(next);
  }

  /**
   * Standard Webhooks rotation: `secret` signs from now on, and the current secret signs beside it until
   * `previousExpiresAt`. Rotating again during a window replaces the previous secret: the one before it stops
   * signing at once (only one previous secret is kept).
   */
  rotateSecret(secret: string, previousExpiresAt: Date): WebhookEndpoint {
    return new WebhookEndpoint({
      ...this.props,
      events: [...this.props.events],
      secret,
      previousSecret: this.props.secret,
      previousSecretExpiresAt: previousExpiresAt,
    });
  }

  /** The secrets that sign a delivery made at `now`. */
  signingSecrets(now: Date): string[] {
    return signingSecrets(this.props, now);
  }

  static restore(props: WebhookEndpointProps): WebhookEndpoint {
    return new WebhookEndpoint({ ...props, events: [...props.events] });
  }

  get id(): number {
    return this.props.id;
  }
  get ownerId(): number {
    return this.props.ownerId;
  }
  get url(): string {
    return this.props.url;
  }
  get events(): readonly WebhookEventType[] {
    return this.props.events;
  }
  get secret(): string {
    return this.props.secret;
  }
  get createdAt(): Date {
    return this.props.createdAt;
  }
  get disabledAt(): Date | null {
    return this.props.disabledAt;
  }
  get previousSecret(): string | null {
    return this.props.previousSecret;
  }
  get previousSecretExpiresAt(): Date | null {
    return this.props.previousSecretExpiresAt;
  }

  toSnapshot(): WebhookEndpointProps {
    return { ...this.props, events: [...this.props.events] };
  }
}
