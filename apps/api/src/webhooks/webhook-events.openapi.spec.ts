import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EventName } from '@petstore/application';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_PING } from '@petstore/domain';
import { eventSchemaName, WEBHOOK_EVENT_SCHEMA } from './webhook-events.openapi';

type Json = Record<string, any>;
const document = JSON.parse(readFileSync(join(__dirname, '../../../../docs/openapi.json'), 'utf8')) as Json;
const schemas = document['components'].schemas as Record<string, Json>;
const subscribe = document['paths']['/webhooks/endpoints'].post as Json;
/** What the service sends: the types an endpoint subscribes to (the domain's list) and the ping. */
const SENT: EventName[] = [...WEBHOOK_EVENT_TYPES, WEBHOOK_PING];

/**
 * The committed description (docs/openapi.json, what consumers generate from) has a schema for every event type the
 * service sends: a type added to EVENT_CATALOGUE without regenerating the description fails here. (That real
 * deliveries match these schemas: webhook-event-schemas.e2e.spec.ts.)
 */
describe('the event schemas of the description', () => {
  it.each(SENT)('%s has its schema: {type: that type, timestamp, data}', (type) => {
    const schema = schemas[eventSchemaName(type)];
    expect(schema).toBeDefined();
    expect(schema['required']).toEqual(['type', 'timestamp', 'data']);
    expect(schema['properties'].type).toEqual({ type: 'string', enum: [type] });
    expect(schema['properties'].timestamp).toMatchObject({ type: 'string', format: 'date-time' });
    const data = schema['properties'].data as Json;
    if (data['$ref']) expect(schemas[data['$ref'].split('/').pop()]).toBeDefined();
    else expect(data).toMatchObject({ type: 'object', properties: expect.any(Object) });
    // Its place in the feed, which a ping (not in the feed) does not have; optional (deliveries of releases before).
    if (type === WEBHOOK_PING) expect(schema['properties'].position).toBeUndefined();
    else expect(schema['properties'].position).toMatchObject({ type: 'string', maxLength: 32 });
  });

  it.each(['Pet', 'Category', 'InventoryItem', 'Order', 'Message'])(
    "%s, an event's data, has its version: optional and read-only (the specification's fields stay as they are)",
    (name) => {
      expect(schemas[name]['properties'].version).toMatchObject({ type: 'integer', readOnly: true, minimum: 1 });
      expect(schemas[name]['required'] ?? []).not.toContain('version');
    },
  );

  it('unites them in WebhookEvent, discriminated by type, and no other', () => {
    const union = schemas[WEBHOOK_EVENT_SCHEMA];
    const refs = SENT.map((type) => `#/components/schemas/${eventSchemaName(type)}`);
    expect(union['oneOf']).toEqual(refs.map(($ref) => ({ $ref })));
    expect(union['discriminator']).toEqual({
      propertyName: 'type',
      mapping: Object.fromEntries(SENT.map((type, i) => [type, refs[i]])),
    });
    const eventSchemas = Object.keys(schemas).filter((name) => name.endsWith('Event') && name !== 'WebhookEvent');
    expect(eventSchemas.sort()).toEqual(SENT.map(eventSchemaName).sort());
  });

  it('documents the request as the `event` callback of POST /webhooks/endpoints, under the webhooks tag', () => {
    const post = subscribe['callbacks'].event['{$request.body#/url}'].post as Json;
    expect(post['tags']).toEqual(['webhooks']);
    expect(post['requestBody'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/WebhookEvent',
    });
    expect(post['parameters'].map((p: Json) => [p['in'], p['name'], p['required']])).toEqual([
      ['header', 'webhook-id', true],
      ['header', 'webhook-timestamp', true],
      ['header', 'webhook-signature', true],
    ]);
    expect(document['tags']).toContainEqual(expect.objectContaining({ name: 'webhooks' }));
    expect(subscribe['tags']).toEqual(['webhooks']);
  });

  it('offers for subscription exactly the domain event types (the ping is sent, never subscribed to)', () => {
    expect(schemas['NewWebhookEndpoint']['properties'].events.items.enum).toEqual([...WEBHOOK_EVENT_TYPES]);
  });
});
