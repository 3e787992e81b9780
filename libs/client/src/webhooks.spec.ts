import { randomUUID } from 'node:crypto';
import { createServer, IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { components } from './generated/schema';
import { verifyWebhook, WebhookEvent, WebhookEventOf, WebhookVerificationError } from './webhooks';

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const ORDER = { id: 10, petId: 1, quantity: 2, complete: false };

/** A delivery as the service sends it: the body and the three Standard Webhooks headers. */
function signed(event: unknown, secret = SECRET, at = new Date()) {
  const body = JSON.stringify(event);
  const id = randomUUID();
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(id, at, body),
    },
  };
}

/** POSTs the delivery to a node:http server and hands back what its handler saw: the raw body and `req.headers`. */
async function receivedByNodeHttp(delivery: ReturnType<typeof signed>) {
  let seen: { body: Buffer; headers: IncomingHttpHeaders } | undefined;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen = { body: Buffer.concat(chunks), headers: req.headers };
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
  if (!seen) throw new Error('nothing received');
  return seen;
}

describe('verifyWebhook', () => {
  it("verifies node:http's IncomingHttpHeaders and raw Buffer, and returns the typed event", async () => {
    const event = { type: 'order.placed', timestamp: '2026-11-23T10:00:00.000Z', data: ORDER };
    const delivery = signed(event);
    const { body, headers } = await receivedByNodeHttp(delivery);
    const verified: WebhookEvent = verifyWebhook(body, headers, SECRET);
    // The event, and its id: the `webhook-id` (the service signs each delivery with its event's id).
    expect(verified).toEqual({ ...event, id: delivery.headers['webhook-id'] });
    // The union narrows on `type`: data is an Order here, a Pet there (compile-time checks as much as runtime).
    if (verified.type !== 'order.placed') throw new Error('not narrowed');
    const order: components['schemas']['Order'] = verified.data;
    expect(order.quantity).toBe(2);
    // @ts-expect-error an order event carries an Order, not a Pet
    const pet: WebhookEventOf<'pet.status_changed'>['data'] = verified.data;
    expect(pet).toBe(order);
  });

  it('accepts a string body, a Uint8Array, Fetch Headers, header names in any case and a list of values', () => {
    const event = { type: 'ping', timestamp: '2026-11-23T10:00:00.000Z', data: { endpointId: 3 } };
    const { body, headers } = signed(event);
    const shouting = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toUpperCase(), value]));
    const asList = { ...headers, 'webhook-signature': [headers['webhook-signature']] };
    for (const [payload, given] of [
      [body, headers],
      [new TextEncoder().encode(body), new Headers(headers)],
      [Buffer.from(body), shouting],
      [body, asList],
    ] as const) {
      const verified = verifyWebhook(payload, given, SECRET);
      expect(verified).toEqual({ ...event, id: headers['webhook-id'] });
      if (verified.type === 'ping') expect(verified.data.endpointId).toBe(3);
    }
  });

  it('accepts the event when one of several signatures matches (a secret being rotated)', () => {
    const event = { type: 'ping', timestamp: '2026-11-23T10:00:00.000Z', data: { endpointId: 1 } };
    const delivery = signed(event);
    const other = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
    const both = `${new Webhook(other).sign(delivery.headers['webhook-id'], new Date(), delivery.body)} ${
      delivery.headers['webhook-signature']
    }`;
    expect(verifyWebhook(delivery.body, { ...delivery.headers, 'webhook-signature': both }, SECRET)).toEqual({
      ...event,
      id: delivery.headers['webhook-id'],
    });
  });

  it('throws a WebhookVerificationError for another secret, a changed body, an old timestamp, missing headers', () => {
    const event = { type: 'order.cancelled', timestamp: '2026-11-23T10:00:00.000Z', data: ORDER };
    const { body, headers } = signed(event);
    const refused = (payload: string, given: Record<string, string>, secret = SECRET) => {
      expect(() => verifyWebhook(payload, given, secret)).toThrow(WebhookVerificationError);
    };
    refused(body, headers, `whsec_${Buffer.alloc(32, 1).toString('base64')}`);
    refused(body.replace('"quantity":2', '"quantity":3'), headers);
    const old = signed(event, SECRET, new Date(Date.now() - 10 * 60_000));
    refused(old.body, old.headers);
    refused(body, { 'content-type': 'application/json' });
    const { 'webhook-signature': _, ...unsigned } = headers;
    refused(body, unsigned);
  });

  it('refuses a genuine body that is not an event object', () => {
    const { body, headers } = signed([1, 2, 3]);
    expect(() => verifyWebhook(body, headers, SECRET)).toThrow(WebhookVerificationError);
  });
});
