import { randomUUID } from 'node:crypto';
import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EventName } from '@petstore/application';
import { verifyWebhook } from '@petstore/client';
import { resetDatabase, testDatabaseUrl } from '@petstore/testing';
import { eventSchemaName, SENT_EVENT_TYPES, WEBHOOK_EVENT_SCHEMA } from '../src/webhooks/webhook-events.openapi';
import { ApiProcess, ensureBuilt } from './support/built-app';
import { eventually } from './support/eventually';
import { OpenApiContract } from './support/openapi-contract';

// Building (when run without CI's build first), starting the process, and the deliveries (pg-boss polls).
jest.setTimeout(240_000);

const ADMIN_KEY = `event-schemas-admin-${randomUUID()}`;

interface Delivery {
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** What a test does to the service so that it sends each event type to the administrator's endpoint. */
interface Scene {
  api: ApiProcess;
  endpointId: number;
  /** A new available pet with `quantity` units in stock. */
  pet(quantity: number): Promise<number>;
  /** An order of one unit of the pet, by the administrator (whose endpoint receives every order's events). */
  order(petId: number): Promise<number>;
}

const ok = async (response: Promise<{ status: number; body: unknown }>, status: number) => {
  const answered = await response;
  if (answered.status !== status) throw new Error(`${answered.status}: ${JSON.stringify(answered.body)}`);
  return answered.body as { id: number };
};
const key = ADMIN_KEY;

/**
 * How to cause each event type the service sends (`SENT_EVENT_TYPES`: EVENT_CATALOGUE's types and the ping): an
 * event type added to the catalogue does not compile here until it has its cause, and then its delivery is validated
 * below.
 */
const CAUSES: Record<EventName, (scene: Scene) => Promise<unknown>> = {
  'order.placed': async ({ pet, order }) => order(await pet(5)),
  'order.completed': async ({ api, pet, order }) => {
    const orderId = await order(await pet(5));
    await ok(api.request('PATCH', `/store/orders/${orderId}`, { key, body: { complete: true } }), 200);
  },
  'order.cancelled': async ({ api, pet, order }) => {
    const orderId = await order(await pet(5));
    await ok(api.request('DELETE', `/store/orders/${orderId}`, { key }), 204);
  },
  'pet.status_changed': async ({ api, pet }) =>
    ok(api.request('PATCH', `/pets/${await pet(1)}`, { key, body: { status: 'sold' } }), 200),
  'message.delivered': ({ api }) => ok(api.request('POST', '/messages', { key, body: { message: 'Hello' } }), 202),
  'pet.created': ({ pet }) => pet(1),
  'pet.updated': async ({ api, pet }) =>
    ok(api.request('PATCH', `/pets/${await pet(1)}`, { key, body: { name: 'Renamed' } }), 200),
  'pet.deleted': async ({ api, pet }) => ok(api.request('DELETE', `/pets/${await pet(1)}`, { key }), 204),
  'category.created': ({ api }) => ok(api.request('POST', '/categories', { key, body: { name: 'Created' } }), 201),
  'category.updated': async ({ api }) => {
    const { id } = await ok(api.request('POST', '/categories', { key, body: { name: 'To update' } }), 201);
    await ok(api.request('PATCH', `/categories/${id}`, { key, body: { description: 'Described' } }), 200);
  },
  'category.deleted': async ({ api }) => {
    const { id } = await ok(api.request('POST', '/categories', { key, body: { name: 'To delete' } }), 201);
    await ok(api.request('DELETE', `/categories/${id}`, { key }), 204);
  },
  'inventory.changed': async ({ api, pet }) =>
    ok(api.request('PUT', `/store/inventory/${await pet(1)}`, { key, body: { quantity: 4 } }), 200),
  ping: ({ api, endpointId }) => ok(api.request('POST', `/webhooks/endpoints/${endpointId}/test`, { key }), 202),
};

/**
 * Real deliveries against the described schemas: the built service, as production runs it, sends every event type
 * it has to a local receiver (a node:http server); each delivery is verified with the client's `verifyWebhook`
 * (node:http's headers, the raw body) and its body validated with ajv against its own component schema, taken from
 * the description the service serves, and against the `WebhookEvent` union. Schemas are closed as the response
 * checks close them: a field the schema does not declare fails.
 */
describe('webhook event schemas, against real deliveries of the built service', () => {
  let server: ApiProcess | undefined;
  let receiver: Server | undefined;
  const deliveries: Delivery[] = [];

  beforeAll(async () => {
    ensureBuilt();
    receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        deliveries.push({ headers: request.headers, body: Buffer.concat(chunks) });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver?.listen(0, '127.0.0.1', resolve));
    const databaseUrl = await testDatabaseUrl();
    await resetDatabase(databaseUrl);
    server = await ApiProcess.start({
      DATABASE_URL: databaseUrl,
      ADMIN_API_KEY: ADMIN_KEY,
      MESSAGE_WORKER: 'true',
      WEBHOOKS_ALLOW_PRIVATE: 'true',
      LOG_LEVEL: 'warn',
    });
  });

  afterAll(async () => {
    if (server) expect(await server.stop()).toBe(0);
    await new Promise((resolve) => (receiver ? receiver.close(resolve) : resolve(undefined)));
  });

  it('delivers every event type, each valid against its schema in the served description', async () => {
    const api = server as ApiProcess;
    const described = new OpenApiContract((await api.request('GET', '/openapi.json')).body);
    const schemas = (described.document['components'] as { schemas: Record<string, unknown> }).schemas;
    expect(Object.keys(schemas)).toEqual(
      expect.arrayContaining([...SENT_EVENT_TYPES.map(eventSchemaName), WEBHOOK_EVENT_SCHEMA]),
    );

    const url = `http://127.0.0.1:${(receiver?.address() as AddressInfo).port}/petstore`;
    const events = SENT_EVENT_TYPES.filter((type) => type !== 'ping');
    const endpoint = await ok(api.request('POST', '/webhooks/endpoints', { key, body: { url, events } }), 201);
    const { secret } = endpoint as unknown as { secret: string };
    const category = await ok(api.request('POST', '/categories', { key, body: { name: 'Event schemas' } }), 201);
    let pets = 0;
    const scene: Scene = {
      api,
      endpointId: endpoint.id,
      pet: async (quantity) => {
        const body = { name: `Event pet ${++pets}`, categoryId: category.id };
        const { id } = await ok(api.request('POST', '/pets', { key, body }), 201);
        await ok(api.request('PUT', `/store/inventory/${id}`, { key, body: { quantity } }), 200);
        return id;
      },
      order: async (petId) =>
        (await ok(api.request('POST', '/store/orders', { key, body: { petId, quantity: 1 } }), 201)).id,
    };
    for (const type of SENT_EVENT_TYPES) await CAUSES[type](scene);

    const received = () => deliveries.map((delivery) => verifyWebhook(delivery.body, delivery.headers, secret).type);
    await eventually(received, (types) => SENT_EVENT_TYPES.every((type) => types.includes(type)), 60_000);

    const problems: string[] = [];
    for (const delivery of deliveries) {
      const event = verifyWebhook(delivery.body, delivery.headers, secret); // node:http's headers, the raw body
      const body = JSON.parse(delivery.body.toString('utf8')) as Record<string, unknown>;
      // The body, and its id: the delivery's webhook-id, which is the event's id in the event log.
      expect(event).toEqual({ ...body, id: delivery.headers['webhook-id'] });
      if (event.type !== 'ping') {
        const logged = (await ok(api.request('GET', `/events/${event.id}`, { key }), 200)) as { position?: unknown };
        // The log's entry is the body with its id, and its feed position once settled (an opaque string).
        expect(logged).toEqual({ ...body, id: event.id, position: logged.position });
        expect(['undefined', 'string']).toContain(typeof logged.position);
      }
      problems.push(...described.checkSchema(eventSchemaName(event.type), body));
      problems.push(...described.checkSchema(WEBHOOK_EVENT_SCHEMA, body));
    }
    expect(problems).toEqual([]);
  });
});
