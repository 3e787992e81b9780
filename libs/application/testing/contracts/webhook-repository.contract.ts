import { WebhookEndpoint } from '@petstore/domain';
import { ConstraintViolationError, UnitOfWork } from '../../src/ports';
import {
  WebhookDeliveryRepository,
  WebhookEndpointRepository,
  WebhookEvent,
  WebhookEventName,
} from '../../src/webhook/webhook.ports';

export interface WebhookContractSubject {
  endpoints: WebhookEndpointRepository;
  deliveries: WebhookDeliveryRepository;
  uow: UnitOfWork;
  /** A stored account (a row of the real store): a customer, or an administrator. */
  newAccountId(role: 'customer' | 'admin'): Promise<number>;
  /** Puts an event in the outbox, as WebhookEvents does inside a change's transaction. */
  addEvent(event: WebhookEvent): Promise<void>;
}

const NOW = new Date('2026-01-15T10:00:00.000Z');
const at = (minutes: number) => new Date(NOW.getTime() + minutes * 60_000);
let events = 0;

/**
 * What the webhook use cases rely on from the endpoint and delivery repositories, run against the in-memory fakes
 * and the PostgreSQL adapters. `makeSubject` gives a fresh, empty store each test.
 */
export function describeWebhookRepositoryContract(
  name: string,
  makeSubject: () => Promise<WebhookContractSubject>,
): void {
  describe(`Webhook repositories contract: ${name}`, () => {
    let subject: WebhookContractSubject;
    let endpoints: WebhookEndpointRepository;
    let deliveries: WebhookDeliveryRepository;
    let customer: number;
    let admin: number;

    const endpoint = async (ownerId: number, eventTypes: string[] = ['order.placed'], ownerIsAdmin = false) => {
      const created = WebhookEndpoint.create({
        id: await endpoints.nextId(),
        ownerId,
        ownerIsAdmin,
        url: `https://hooks.example/${ownerId}`,
        events: eventTypes,
        secret: 'whsec_contract',
        now: NOW,
      });
      await endpoints.add(created);
      return created;
    };
    const event = async (type: WebhookEventName, subjectOwnerId: number | null, endpointId: number | null = null) => {
      const stored: WebhookEvent = {
        id: `00000000-0000-4000-8000-${String(++events).padStart(12, '0')}`,
        type,
        subjectOwnerId,
        endpointId,
        body: JSON.stringify({ type, timestamp: NOW.toISOString(), data: { n: events } }),
        createdAt: NOW,
      };
      await subject.addEvent(stored);
      return stored;
    };

    beforeEach(async () => {
      subject = await makeSubject();
      ({ endpoints, deliveries } = subject);
      customer = await subject.newAccountId('customer');
      admin = await subject.newAccountId('admin');
    });

    it('gives new ids from a sequence; stores an endpoint and reads it back; refuses an unknown owner', async () => {
      const first = await endpoint(customer);
      expect(await endpoints.nextId()).toBeGreaterThan(first.id);
      expect((await endpoints.findById(first.id))?.toSnapshot()).toEqual(first.toSnapshot());
      expect(await endpoints.findById(first.id + 1000)).toBeNull();
      const orphan = WebhookEndpoint.create({
        id: await endpoints.nextId(),
        ownerId: customer + admin + 1000,
        ownerIsAdmin: false,
        url: 'https://hooks.example/none',
        events: ['order.placed'],
        secret: 'whsec_x',
        now: NOW,
      });
      await expect(endpoints.add(orphan)).rejects.toBeInstanceOf(ConstraintViolationError);
      expect(await endpoints.findById(orphan.id)).toBeNull();
    });

    it('locks an endpoint only inside a unit of work, and finds nothing to lock for an unknown id', async () => {
      const hook = await endpoint(customer);
      await expect(endpoints.lockById(hook.id)).rejects.toThrow(/transaction/i);
      await subject.uow.run(async () => {
        expect((await endpoints.lockById(hook.id))?.toSnapshot()).toEqual(hook.toSnapshot());
        expect(await endpoints.lockById(hook.id + 1000)).toBeNull();
      });
    });

    it("counts and lists an owner's endpoints, ascending, a keyset page at a time", async () => {
      const [a, b, c] = [await endpoint(customer), await endpoint(customer), await endpoint(customer)];
      await endpoint(admin, ['order.placed'], true);
      expect(await endpoints.countByOwner(customer)).toBe(3);
      const first = await endpoints.listByOwner(customer, { limit: 2 });
      expect(first.items.map((e) => e.id)).toEqual([a.id, b.id]);
      expect(first.nextAfterId).toBe(b.id);
      expect(await endpoints.listByOwner(customer, { limit: 2, afterId: b.id })).toEqual({
        items: [expect.objectContaining({ id: c.id })],
        nextAfterId: null,
      });
    });

    it("finds the subject owner's and the administrators' enabled endpoints subscribed to the type", async () => {
      const mine = await endpoint(customer, ['order.placed', 'order.cancelled']);
      await endpoint(customer, ['message.delivered']); // another type
      const other = await subject.newAccountId('customer');
      await endpoint(other, ['order.placed']); // another owner
      const store = await endpoint(admin, ['order.placed'], true);
      const found = await endpoints.findSubscribers('order.placed', customer);
      expect(found.map(({ endpoint: e, ownerIsAdmin }) => [e.id, ownerIsAdmin])).toEqual([
        [mine.id, false],
        [store.id, true],
      ]);
      expect(await endpoints.hasSubscribers('order.placed', customer)).toBe(true);
      expect(await endpoints.hasSubscribers('pet.status_changed', null)).toBe(false);
      expect((await endpoints.findSubscribers('order.placed', null)).map(({ endpoint: e }) => e.id)).toEqual([
        store.id,
      ]);
    });

    it('disables the endpoints failing since before a time; a delivered attempt ends the streak', async () => {
      const failing = await endpoint(customer);
      const recovered = await endpoint(customer);
      await endpoints.recordHealth(failing.id, false, at(0));
      await endpoints.recordHealth(failing.id, false, at(30)); // the streak keeps its start
      await endpoints.recordHealth(recovered.id, false, at(0));
      await endpoints.recordHealth(recovered.id, true, at(10));
      expect(await endpoints.disableFailingSince(at(20), at(40))).toBe(1);
      expect((await endpoints.findById(failing.id))?.disabledAt).toEqual(at(40));
      expect((await endpoints.findById(recovered.id))?.disabledAt).toBeNull();
      expect(await endpoints.hasSubscribers('order.placed', customer)).toBe(true); // the recovered one
      expect(await endpoints.disableFailingSince(at(20), at(50))).toBe(0); // already disabled
    });

    it('creates one delivery per endpoint of an event, once however often it runs', async () => {
      const [a, b] = [await endpoint(customer), await endpoint(customer)];
      const placed = await event('order.placed', customer);
      const created = await deliveries.createFor(placed.id, [a.id, b.id], NOW);
      expect(created).toHaveLength(2);
      expect(await deliveries.createFor(placed.id, [a.id, b.id], at(1))).toEqual([]);
      expect(await deliveries.createFor(placed.id, [], at(1))).toEqual([]);
      const target = await deliveries.findTarget(created[0]);
      expect(target).toEqual({
        delivery: expect.objectContaining({
          id: created[0],
          eventId: placed.id,
          type: 'order.placed',
          endpointId: a.id,
          status: 'pending',
          attempts: 0,
          lastStatusCode: null,
          lastError: null,
          createdAt: NOW,
          deliveredAt: null,
        }),
        url: a.url,
        secret: 'whsec_contract',
        endpointDisabled: false,
        body: placed.body,
      });
      expect(await deliveries.findTarget(created[1] + 1000)).toBeNull();
    });

    it('records an attempt only once, and only while the delivery is pending', async () => {
      const hook = await endpoint(customer);
      const [id] = await deliveries.createFor((await event('order.placed', customer)).id, [hook.id], NOW);
      const failed = {
        deliveryId: id,
        attempt: 1,
        previousAttempts: 0,
        status: 'pending' as const,
        statusCode: 500,
        error: 'x'.repeat(1500),
        nextAttemptAt: at(1),
        at: at(0),
      };
      expect(await deliveries.recordAttempt(failed)).toBe(true);
      expect(await deliveries.recordAttempt(failed)).toBe(false); // the same attempt, run again
      const afterFirst = (await deliveries.findTarget(id))!.delivery;
      expect(afterFirst).toMatchObject({ attempts: 1, status: 'pending', lastStatusCode: 500, nextAttemptAt: at(1) });
      expect(afterFirst.lastError).toHaveLength(1000);
      const delivered = { ...failed, attempt: 2, previousAttempts: 1, status: 'delivered' as const, statusCode: 204 };
      expect(await deliveries.recordAttempt({ ...delivered, error: null, nextAttemptAt: null, at: at(2) })).toBe(true);
      expect((await deliveries.findTarget(id))!.delivery).toMatchObject({
        attempts: 2,
        status: 'delivered',
        lastStatusCode: 204,
        lastError: null,
        deliveredAt: at(2),
      });
      const late = { ...delivered, attempt: 3, previousAttempts: 2, status: 'failed' as const };
      expect(await deliveries.recordAttempt(late)).toBe(false); // settled: nothing changes it
    });

    it("lists an endpoint's deliveries newest first, a page at a time", async () => {
      const hook = await endpoint(customer);
      const ids: number[] = [];
      for (let i = 0; i < 3; i++) {
        ids.push(...(await deliveries.createFor((await event('order.placed', customer)).id, [hook.id], at(i))));
      }
      const first = await deliveries.listForEndpoint(hook.id, { limit: 2 });
      expect(first.items.map((d) => d.id)).toEqual([ids[2], ids[1]]);
      const rest = await deliveries.listForEndpoint(hook.id, { limit: 2, afterId: first.nextAfterId as number });
      expect(rest).toEqual({ items: [expect.objectContaining({ id: ids[0] })], nextAfterId: null });
    });

    it('deleting an endpoint deletes its deliveries and its pings; a failed transaction leaves nothing', async () => {
      const hook = await endpoint(customer);
      const ping = await event('ping', null, hook.id);
      const [id] = await deliveries.createFor(ping.id, [hook.id], NOW);
      await expect(
        subject.uow.run(async () => {
          await endpoints.delete(hook.id);
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect(await endpoints.findById(hook.id)).not.toBeNull();
      await subject.uow.run(() => endpoints.delete(hook.id));
      expect(await endpoints.findById(hook.id)).toBeNull();
      expect(await deliveries.findTarget(id)).toBeNull();
      expect(await endpoints.countByOwner(customer)).toBe(0);
    });
  });
}
