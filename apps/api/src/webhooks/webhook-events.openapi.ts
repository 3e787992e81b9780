import type { EventName } from '@petstore/application';
import { eventDefinition, WEBHOOK_EVENT_TYPES, WEBHOOK_PING } from '@petstore/domain';

type Schema = Record<string, unknown>;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

interface EventPayload {
  /** The component schema of `data` (the resource as the API's responses show it), or its schema. */
  data: string | Schema;
  /** When the event is sent, and to whom when that is narrower than the endpoint's owner. */
  sent: string;
}

/** The catalogue's events (audience `everyone`): who receives them. */
const EVERYONE =
  "Every account may subscribe to it and sees it in `GET /events` (the store's catalogue, which every account " +
  'may read): a storefront follows the catalogue with it.';

/** Webhooks' own event, which no use case records: sent to one endpoint to test it. */
const PING: EventPayload = {
  data: {
    type: 'object',
    required: ['endpointId'],
    properties: { endpointId: { type: 'integer', format: 'int64', description: 'The endpoint tested.', example: 1 } },
  },
  sent:
    'Sent by `POST /webhooks/endpoints/{endpointId}/test` to that endpoint alone, once, never retried; ' +
    'nobody subscribes to it.',
};

/**
 * Every event the service sends, and what it carries in `data`: what the description's event schemas
 * (`OrderPlacedEvent`… and their union `WebhookEvent`, the body of the `event` callback of `POST /webhooks/endpoints`)
 * are made from, and through the generated types the client's `WebhookEvent`. An event type's payload is its
 * definition's (EVENT_CATALOGUE, libs/domain/src/events): the schema its subject is shown as, and its description
 * (with the catalogue's audience said); the ping is webhooks' own.
 */
export function webhookEventPayload(type: EventName): EventPayload {
  if (type === WEBHOOK_PING) return PING;
  const { subject, audience, description } = eventDefinition(type);
  return { data: subject, sent: audience === 'everyone' ? `${description} ${EVERYONE}` : description };
}

/** Every event type, subscribable ones first, in the order of WEBHOOK_EVENT_TYPES. */
export const SENT_EVENT_TYPES: readonly EventName[] = [...WEBHOOK_EVENT_TYPES, WEBHOOK_PING];

/** The component schema of one event type's body: `<family>.<what_happened>` → `<Family><WhatHappened>Event`. */
export function eventSchemaName(type: EventName): string {
  return `${type
    .split(/[._]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('')}Event`;
}

/** The union of every event body, discriminated by `type`. */
export const WEBHOOK_EVENT_SCHEMA = 'WebhookEvent';

/**
 * An event's place in the commit-order feed (EventBodies adds it to what is sent). Not required: a ping has none, and
 * the previous release, whose workers may still send during an upgrade, sends none.
 */
const POSITION: Schema = {
  type: 'string',
  description:
    'Where the event is in the commit-order feed: the `position` `GET /events?order=commit` lists it with (opaque, ' +
    'encrypted; the same on every attempt). Deliveries do not arrive in order: to catch up, read the feed from the ' +
    'last position you processed (`GET /events?startingAfter=…`), or keep per resource the `data` with the highest ' +
    '`version`. Absent from a ping (not in the feed).',
  minLength: 32,
  maxLength: 32,
  pattern: '^[A-Za-z0-9_-]{32}$',
  example: 'Vq3f0cJm8Xo2bT7uYxN1aQkLp9sRz4eW',
};

function eventSchema(type: EventName): Schema {
  const { data, sent } = webhookEventPayload(type);
  return {
    type: 'object',
    description: `The body of the \`${type}\` event. ${sent}`,
    required: ['type', 'timestamp', 'data'],
    properties: {
      type: { type: 'string', enum: [type] },
      timestamp: {
        type: 'string',
        format: 'date-time',
        description: 'When the event happened (ISO 8601, UTC); the same on every attempt.',
        example: '2026-11-23T10:00:00.000Z',
      },
      data: typeof data === 'string' ? ref(data) : data,
      ...(type === WEBHOOK_PING ? {} : { position: POSITION }),
    },
  };
}

/** `OrderPlacedEvent`… and `WebhookEvent`, for `components.schemas`. */
export function webhookEventSchemas(): Record<string, Schema> {
  return {
    ...Object.fromEntries(SENT_EVENT_TYPES.map((type) => [eventSchemaName(type), eventSchema(type)])),
    [WEBHOOK_EVENT_SCHEMA]: {
      description:
        'Any event the service POSTs to a webhook endpoint: `type` says which, and which schema the body follows. ' +
        'A newer service may send a type this description does not list yet: ignore (and answer 2xx to) what you ' +
        'do not know. Deliveries are not ordered (retries, several workers): an event about a resource may arrive ' +
        'after a later one about it. Apply one only when its `data.version` is higher than the version you hold ' +
        'of that resource (a `*.deleted` removes it for good: ids are never reused), or take a delivery as a signal ' +
        'to read `GET /events` from your saved `position`.',
      oneOf: SENT_EVENT_TYPES.map((type) => ref(eventSchemaName(type))),
      discriminator: {
        propertyName: 'type',
        mapping: Object.fromEntries(SENT_EVENT_TYPES.map((type) => [type, ref(eventSchemaName(type)).$ref])),
      },
    },
  };
}

const header = (name: string, description: string, schema: Schema) => ({
  in: 'header',
  name,
  required: true,
  description,
  schema: { type: 'string', ...schema },
});

/** The callbacks of `POST /webhooks/endpoints`: one request, to the endpoint's `url`, whatever the event. */
export function webhookEventCallbacks(): Record<string, unknown> {
  return {
    event: {
      '{$request.body#/url}': {
        post: {
          operationId: 'receiveWebhookEvent',
          tags: ['webhooks'],
          summary: "An event, POSTed to the endpoint's `url` (implemented by you)",
          description:
            'Each event the endpoint subscribed to (and the pings it is sent), as JSON: ' +
            SENT_EVENT_TYPES.map((type) => `\`${type}\` (\`${eventSchemaName(type)}\`)`).join(', ') +
            '. Signed by the Standard Webhooks scheme with the secret `POST /webhooks/endpoints` answered: verify ' +
            'the raw body and these headers before trusting it (`verifyWebhook` of `@petstore/client`, or ' +
            '`new Webhook(secret).verify(body, headers)` of `standardwebhooks`). Delivered at least once: the same ' +
            '`webhook-id` may come again. Not in order: keep per resource the newest `data.version` (see ' +
            '`WebhookEvent`).',
          security: [],
          parameters: [
            header('webhook-id', "The event's id, the same on every attempt: deduplicate by it.", {
              format: 'uuid',
              maxLength: 36,
            }),
            header('webhook-timestamp', 'When this attempt was signed (unix seconds): refuse one far from now.', {
              pattern: '^[0-9]{1,12}$',
              maxLength: 12,
            }),
            header(
              'webhook-signature',
              '`v1,<base64 of HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`; several, separated by ' +
                'spaces, when more than one secret signs (accept the event when one of them matches).',
              { pattern: '^v1,[A-Za-z0-9+/]+=*( v1,[A-Za-z0-9+/]+=*)*$', maxLength: 1024 },
            ),
          ],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: ref(WEBHOOK_EVENT_SCHEMA),
                // The ping (the first delivery `POST /webhooks/endpoints/{endpointId}/test` makes): an order event's
                // Order has required read-only fields, which Spectral wants in an example and Redocly refuses in a
                // request's (it reads a callback's request as a client's). Each event's schema shows its own data.
                example: { type: WEBHOOK_PING, timestamp: '2026-11-23T10:00:00.000Z', data: { endpointId: 1 } },
              },
            },
          },
          responses: {
            '2XX': { description: 'Delivered: any 2xx answered within 10 s; the body is ignored.' },
            '4XX': {
              description:
                'Refused (a signature that does not verify, say): a failure like any other, retried (not a ping).',
            },
            default: {
              description:
                'Anything else, or no answer within 10 s: retried on the schedule `POST /webhooks/endpoints` ' +
                'describes (a ping is not retried). Redirects are not followed.',
            },
          },
        },
      },
    },
  };
}
