import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { SentWebhookEvent } from './sent.js';

export { WebhookVerificationError };

/**
 * A body the service POSTs to a webhook endpoint (`WebhookEvent` in its OpenAPI description, its Orders as sent):
 * a union discriminated by `type`, so that `switch (event.type)` narrows `data` to the Order, Pet, Message or ping
 * it carries.
 */
export type WebhookEvent = SentWebhookEvent;
/**
 * What `verifyWebhook` returns: the event, with its `id` (the delivery's `webhook-id` header: the event's id, the
 * same on every attempt and in the event log, `GET /events/{eventId}`): deduplicate by it.
 */
export type VerifiedWebhookEvent = WebhookEvent & { id: string };
/**
 * The `type` of a body an endpoint may receive: each of the description's `EventType`, and `'ping'` (sent by
 * `POST /webhooks/endpoints/{endpointId}/test`, whatever the endpoint subscribes to). To subscribe, see
 * `SubscribableEventType`, which has no `ping`.
 */
export type WebhookEventType = WebhookEvent['type'];
/**
 * What an endpoint's `events` takes (and `GET /events?type=`): every event type but `ping` (pings are not events of
 * the log, nobody subscribes to them; an endpoint's `events` refuses one). The description's `EventType`.
 */
export type SubscribableEventType = Exclude<WebhookEventType, 'ping'>;
/** The body of one event type: `WebhookEventOf<T>['data']` is the resource its schema names (an order's: an Order). */
export type WebhookEventOf<Type extends WebhookEventType> = Extract<WebhookEvent, { type: Type }>;

/**
 * The request headers as servers hand them over: node:http's `IncomingHttpHeaders` and Fastify's `request.headers`
 * (values `string | string[] | undefined`), a plain record, or the Fetch API's `Headers`.
 */
export type WebhookHeaders = FetchHeaders | Record<string, string | readonly string[] | undefined>;
type FetchHeaders = { get(name: string): string | null };

const SIGNED_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

function header(headers: WebhookHeaders, name: string): string {
  if (isFetchHeaders(headers)) return headers.get(name) ?? '';
  const key = Object.keys(headers).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : headers[key];
  // A header sent twice: node:http joins most, but a framework may hand over a list; signatures are space-separated.
  return typeof value === 'string' ? value : (value ?? []).join(' ');
}

function isFetchHeaders(headers: WebhookHeaders): headers is FetchHeaders {
  return typeof (headers as { get?: unknown }).get === 'function';
}

/**
 * Checks a delivery's Standard Webhooks signature (`webhook-id`, `webhook-timestamp` within 5 minutes of now,
 * `webhook-signature` by `secret`, the `whsec_…` that creating the endpoint answered) over the raw body, exactly as
 * received (not a re-serialised object), and returns the event with its `id` (the `webhook-id`: deduplicate by it;
 * it is the event's id in the event log). Throws `WebhookVerificationError` unless genuine.
 *
 * Built on the `standardwebhooks` package; what it adds is reading the headers as node:http and Fastify give them
 * (its own `verify` wants a `Record<string, string>`) and typing the result. A signed body comes from the service,
 * so it is not validated again; `event.type` may still be one this version of the client does not know (a newer
 * service): leave those to a `default`.
 */
export function verifyWebhook(
  body: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
): VerifiedWebhookEvent {
  const id = header(headers, 'webhook-id');
  const signed = Object.fromEntries(SIGNED_HEADERS.map((name) => [name, header(headers, name)]));
  // standardwebhooks signs a string or a Node.js Buffer (it checks the constructor's name): decode any other bytes.
  const payload = typeof body === 'string' ? body : new TextDecoder().decode(body);
  const event = new Webhook(secret).verify(payload, signed);
  if (!event || typeof event !== 'object' || typeof (event as { type?: unknown }).type !== 'string') {
    throw new WebhookVerificationError('The body is not an event');
  }
  // The signed `webhook-id` is the event's id (the service signs each delivery with its event's id).
  return { ...(event as WebhookEvent), id };
}
