import { WebhookEndpoint } from '@petstore/domain';
import { ConstraintViolationError, UnitOfWork } from '../../src/ports';
import { EventLog, EventName, EVERY_ACCOUNT, OutboxEvent } from '../../src/events/event.ports';
import { WebhookDeliveryRepository, WebhookEndpointRepository } from '../../src/webhook/webhook.ports';

export interface WebhookContractSubject {
  endpoints: WebhookEndpointRepository;
  deliveries: WebhookDeliveryRepository;
  /** The event log over the same store. */
  events: EventLog;
  uow: UnitOfWork;
  /** A stored account (a row of the real store): a customer, or an administrator. */
  newAccountId(role: 'customer' | 'admin'): Promise<number>;
  /** Puts an event in the outbox, as EventRecorder does inside a change's transaction. */
  addEvent(event: OutboxEvent): Promise<void>;
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
    const event = async (
      type: EventName,
      subjectOwnerId: number | null,
      endpointId: number | null = null,
      createdAt = NOW,
    ) => {
      const stored: OutboxEvent = {
        id: `00000000-0000-4000-8000-${String(++events).padStart(12, '0')}`,
        type,
        subjectOwnerId,
        endpointId,
        body: JSON.stringify({ type, timestamp: createdAt.toISOString(), data: { n: events } }),
        createdAt,
      };
      await subject.addEvent(stored);
      return stored;
    };

    /** A delivery's target once its event is settled in the feed (at once, unless a writer is in flight). */
    const settled = async (deliveryId: number) => {
      for (let tries = 0; ; tries++) {
        const target = await deliveries.findTarget(deliveryId);
        if (target?.settled || tries === 600) return target;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
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

    it('finds every enabled endpoint subscribed to a catalogue event, whoever owns it', async () => {
      const mine = await endpoint(customer, ['pet.updated', 'inventory.changed']);
      const other = await endpoint(await subject.newAccountId('customer'), ['inventory.changed']);
      await endpoint(customer, ['order.placed']); // another type
      const store = await endpoint(admin, ['inventory.changed'], true);
      const found = await endpoints.findSubscribers('inventory.changed', EVERY_ACCOUNT);
      expect(found.map(({ endpoint: e }) => e.id)).toEqual([mine.id, other.id, store.id]);
      expect(await endpoints.hasSubscribers('pet.updated', EVERY_ACCOUNT)).toBe(true);
      expect(await endpoints.hasSubscribers('category.created', EVERY_ACCOUNT)).toBe(false);
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

    it("locks an endpoint with its owner's role; writes its changes, keeping id, owner, creation", async () => {
      const hook = await endpoint(customer);
      const store = await endpoint(admin, ['pet.status_changed'], true);
      expect(await subject.uow.run(() => endpoints.lockWithOwner(hook.id + store.id + 1000))).toBeNull();
      const locked = await subject.uow.run(() => endpoints.lockWithOwner(store.id));
      expect(locked?.ownerIsAdmin).toBe(true);
      expect(locked?.endpoint.toSnapshot()).toEqual(store.toSnapshot());
      const changed = hook
        .change({ url: 'https://hooks.example/moved', events: ['order.completed'], enabled: false }, false, at(1))
        .rotateSecret('whsec_rotated', at(60));
      await subject.uow.run(async () => {
        expect((await endpoints.lockWithOwner(hook.id))?.ownerIsAdmin).toBe(false);
        await endpoints.update(changed, { resetHealth: false });
      });
      const stored = await endpoints.findById(hook.id);
      expect(stored?.toSnapshot()).toEqual({
        ...hook.toSnapshot(),
        url: 'https://hooks.example/moved',
        events: ['order.completed'],
        disabledAt: at(1),
        secret: 'whsec_rotated',
        previousSecret: 'whsec_contract',
        previousSecretExpiresAt: at(60),
      });
      expect(await endpoints.hasSubscribers('order.completed', customer)).toBe(false); // disabled
      await endpoints.update(stored!.change({ enabled: true }, false, at(2)), { resetHealth: true });
      expect(await endpoints.hasSubscribers('order.completed', customer)).toBe(true);
      expect(await endpoints.hasSubscribers('order.placed', customer)).toBe(false);
      expect((await endpoints.findById(store.id))?.toSnapshot()).toEqual(store.toSnapshot()); // only that one
    });

    it('ends the failing streak only when told to (an endpoint enabled again starts afresh)', async () => {
      const [kept, reset] = [await endpoint(customer), await endpoint(customer)];
      for (const hook of [kept, reset]) await endpoints.recordHealth(hook.id, false, at(0));
      await endpoints.update(kept.change({ events: ['order.cancelled'] }, false, at(1)), { resetHealth: false });
      await endpoints.update(reset, { resetHealth: true });
      expect(await endpoints.disableFailingSince(at(10), at(20))).toBe(1);
      expect((await endpoints.findById(kept.id))?.disabledAt).toEqual(at(20));
      expect((await endpoints.findById(reset.id))?.disabledAt).toBeNull();
    });

    it("gives an attempt the endpoint's previous secret and its expiry after a rotation", async () => {
      const hook = await endpoint(customer);
      await endpoints.update(hook.rotateSecret('whsec_new', at(60)), { resetHealth: false });
      const [id] = await deliveries.createFor((await event('order.placed', customer)).id, [hook.id], NOW);
      expect(await deliveries.findTarget(id)).toMatchObject({
        secret: 'whsec_new',
        previousSecret: 'whsec_contract',
        previousSecretExpiresAt: at(60),
      });
    });

    it('creates one delivery per endpoint of an event, once however often it runs', async () => {
      const [a, b] = [await endpoint(customer), await endpoint(customer)];
      const placed = await event('order.placed', customer);
      const created = await deliveries.createFor(placed.id, [a.id, b.id], NOW);
      expect(created).toHaveLength(2);
      expect(await deliveries.createFor(placed.id, [a.id, b.id], at(1))).toEqual([]);
      expect(await deliveries.createFor(placed.id, [], at(1))).toEqual([]);
      // Settled once every transaction that began writing before its own has ended (on PostgreSQL, the server's:
      // another writer in flight, a test of another worker, holds it back a moment).
      const target = await settled(created[0]);
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
        previousSecret: null,
        previousSecretExpiresAt: null,
        endpointDisabled: false,
        endpointFailing: false,
        body: placed.body,
        // Its place in the commit-order feed, settled: the one the log lists it with.
        position: (await subject.events.findById(placed.id))?.position,
        settled: true,
      });
      expect(target?.position).toEqual({ xact: expect.any(String), seq: expect.any(Number) });
      expect(await deliveries.findTarget(created[1] + 1000)).toBeNull();
      // The endpoint's failing streak is read with it (a delivery then ends it, in the attempt's transaction).
      await endpoints.recordHealth(a.id, false, at(1));
      expect(await deliveries.findTarget(created[0])).toMatchObject({ endpointFailing: true });
    });

    it('gives a ping no place in the feed (it is not in it): sent at once, as stored', async () => {
      const hook = await endpoint(customer);
      const ping = await event('ping', customer, hook.id);
      const [id] = await deliveries.createFor(ping.id, [hook.id], NOW);
      expect(await deliveries.findTarget(id)).toMatchObject({ body: ping.body, position: null, settled: true });
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

    it('reads targets and records outcomes asked for at once as one by one, each by its own guard', async () => {
      const hooks = [await endpoint(customer), await endpoint(customer), await endpoint(customer)];
      const placed = await event('order.placed', customer);
      const ids = await deliveries.createFor(
        placed.id,
        hooks.map((hook) => hook.id),
        at(0),
      );
      const alone = await Promise.all(ids.map((id) => deliveries.findTarget(id)));
      const together = await Promise.all([...ids, ids[0], ids[2] + 1000].map((id) => deliveries.findTarget(id)));
      expect(together).toEqual([...alone, alone[0], null]);
      expect(together.map((target) => target?.url)).toEqual([
        ...hooks.map((hook) => hook.url),
        hooks[0].url,
        undefined,
      ]);
      const outcome = (deliveryId: number, previousAttempts = 0) => ({
        deliveryId,
        attempt: previousAttempts + 1,
        previousAttempts,
        status: 'delivered' as const,
        statusCode: 200,
        error: null,
        nextAttemptAt: null,
        at: at(1),
      });
      const recorded = await Promise.all([
        ...ids.map((id) => deliveries.recordAttempt(outcome(id))),
        // The same attempt reported twice at once (a job run again): recorded once.
        deliveries.recordAttempt(outcome(ids[0])),
        // An attempt on a count of attempts the delivery does not have: nothing.
        deliveries.recordAttempt(outcome(ids[1], 5)),
      ]);
      expect(recorded).toEqual([true, true, true, false, false]);
      for (const id of ids) {
        expect((await deliveries.findTarget(id))!.delivery).toMatchObject({ attempts: 1, status: 'delivered' });
      }
    });

    it('counts the pending deliveries, those retrying, the earliest due, and the failing endpoints', async () => {
      expect(await deliveries.queueStats()).toEqual({
        pending: 0,
        retrying: 0,
        earliestDueAt: null,
        failingEndpoints: 0,
      });
      const [a, b, off] = [await endpoint(customer), await endpoint(customer), await endpoint(customer)];
      const placed = await event('order.placed', customer);
      const [first, second, third] = await deliveries.createFor(placed.id, [a.id, b.id, off.id], at(5));
      const outcome = { previousAttempts: 0, attempt: 1, statusCode: 500, error: 'http_status', at: at(6) };
      await deliveries.recordAttempt({ ...outcome, deliveryId: first, status: 'pending', nextAttemptAt: at(3) });
      await deliveries.recordAttempt({ ...outcome, deliveryId: second, status: 'delivered', nextAttemptAt: null });
      await deliveries.recordAttempt({ ...outcome, deliveryId: third, status: 'failed', nextAttemptAt: null });
      await endpoints.recordHealth(a.id, false, at(6));
      await endpoints.recordHealth(off.id, false, at(6));
      await endpoints.disableFailingSince(at(7), at(8)); // both disabled: no longer counted as failing
      const [other] = await deliveries.createFor((await event('order.placed', customer)).id, [b.id], at(9));
      expect(other).toBeGreaterThan(0);
      expect(await deliveries.queueStats()).toEqual({
        pending: 2,
        retrying: 1,
        earliestDueAt: at(3),
        failingEndpoints: 0,
      });
      await endpoints.recordHealth(b.id, false, at(10));
      expect((await deliveries.queueStats()).failingEndpoints).toBe(1);
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

    it("requeues a settled delivery of the endpoint: pending, due now; not a pending one or another's", async () => {
      const hook = await endpoint(customer);
      const other = await endpoint(customer);
      const [id] = await deliveries.createFor((await event('order.placed', customer)).id, [hook.id], NOW);
      expect(await subject.uow.run(() => deliveries.requeue(hook.id, id, () => at(1)))).toBe('pending');
      expect(await subject.uow.run(() => deliveries.requeue(other.id, id, () => at(1)))).toBe('not_found');
      expect(await subject.uow.run(() => deliveries.requeue(hook.id, id + 1000, () => at(1)))).toBe('not_found');
      const failed = { deliveryId: id, attempt: 1, previousAttempts: 0, statusCode: 500, error: 'http_status' };
      await deliveries.recordAttempt({ ...failed, status: 'failed', nextAttemptAt: null, at: at(0) });
      const requeued = await subject.uow.run(() => deliveries.requeue(hook.id, id, () => at(5)));
      expect(requeued).toEqual(
        expect.objectContaining({ id, status: 'pending', attempts: 1, nextAttemptAt: at(5), lastStatusCode: 500 }),
      );
      expect((await deliveries.findTarget(id))!.delivery).toMatchObject({ status: 'pending', nextAttemptAt: at(5) });
      expect(await subject.uow.run(() => deliveries.requeue(hook.id, id, () => at(6)))).toBe('pending');
      // The next attempt is recorded as any other (the guard on the attempts made holds).
      const second = { ...failed, attempt: 2, previousAttempts: 1, statusCode: 204, error: null };
      expect(await deliveries.recordAttempt({ ...second, status: 'delivered', nextAttemptAt: null, at: at(6) })).toBe(
        true,
      );
    });

    it('requeues a pending delivery waiting for its back-off: due now; not once its attempt is due', async () => {
      const hook = await endpoint(customer);
      const [id] = await deliveries.createFor((await event('order.placed', customer)).id, [hook.id], NOW);
      const failed = { deliveryId: id, attempt: 1, previousAttempts: 0, statusCode: 503, error: 'http_status' };
      await deliveries.recordAttempt({ ...failed, status: 'pending', nextAttemptAt: at(60), at: at(0) });
      const requeued = await subject.uow.run(() => deliveries.requeue(hook.id, id, () => at(5)));
      expect(requeued).toEqual(expect.objectContaining({ id, status: 'pending', attempts: 1, nextAttemptAt: at(5) }));
      // The second of two at once reads its clock after the first committed: the attempt is due, it is refused.
      expect(await subject.uow.run(() => deliveries.requeue(hook.id, id, () => at(5)))).toBe('pending');
      expect((await deliveries.findTarget(id))!.delivery).toMatchObject({ status: 'pending', nextAttemptAt: at(5) });
    });

    it('recovers failed and waiting deliveries since a time, oldest first, in batches; all: delivered', async () => {
      const hook = await endpoint(customer);
      const other = await endpoint(customer);
      const created = async (minutes: number, endpointId = hook.id, type: EventName = 'order.placed') => {
        const pingOf = type === 'ping' ? endpointId : null;
        const [id] = await deliveries.createFor((await event(type, customer, pingOf)).id, [endpointId], at(minutes));
        return id;
      };
      const attempt = (id: number, status: 'pending' | 'delivered' | 'failed', nextAttemptAt: Date | null) =>
        deliveries.recordAttempt({
          deliveryId: id,
          attempt: 1,
          previousAttempts: 0,
          statusCode: status === 'delivered' ? 204 : 503,
          error: status === 'delivered' ? null : 'http_status',
          status,
          nextAttemptAt,
          at: at(30),
        });
      const tooEarly = await created(0);
      await attempt(tooEarly, 'failed', null);
      const failed = await created(10);
      await attempt(failed, 'failed', null);
      const waiting = await created(11);
      await attempt(waiting, 'pending', at(120));
      const delivered = await created(12);
      await attempt(delivered, 'delivered', null);
      const due = await created(13); // never tried: its attempt is due
      const ping = await created(14, hook.id, 'ping');
      await attempt(ping, 'failed', null);
      const elsewhere = await created(15, other.id);
      await attempt(elsewhere, 'failed', null);
      const [late1, late2] = [await created(20), await created(20)];
      for (const id of [late1, late2]) await attempt(id, 'failed', null);
      const recover = (all: boolean, since: Date, limit: number, now = at(60)) =>
        subject.uow.run(() => deliveries.recoverSince({ endpointId: hook.id, since, all, limit }, () => now));

      // A batch never ends inside deliveries created at one instant: the two at minute 20 go to the next call.
      expect(await recover(false, at(10), 3)).toEqual({
        requeued: [failed, waiting].map((id) => ({ id, nextAttemptAt: at(60) })),
        nextSince: at(20),
      });
      expect((await deliveries.findTarget(failed))!.delivery).toMatchObject({
        status: 'pending',
        nextAttemptAt: at(60),
      });
      expect((await deliveries.findTarget(waiting))!.delivery).toMatchObject({ attempts: 1, nextAttemptAt: at(60) });
      expect(await recover(false, at(20), 3)).toEqual({
        requeued: [late1, late2].map((id) => ({ id, nextAttemptAt: at(60) })),
        nextSince: null,
      });
      // Asked again: every one of them is due already (queued), none is made due twice.
      expect(await recover(false, at(10), 3, at(61))).toEqual({ requeued: [], nextSince: null });
      expect((await deliveries.findTarget(tooEarly))!.delivery.status).toBe('failed');
      expect((await deliveries.findTarget(due))!.delivery.nextAttemptAt).toEqual(at(13));
      expect((await deliveries.findTarget(ping))!.delivery.status).toBe('failed');
      expect((await deliveries.findTarget(elsewhere))!.delivery.status).toBe('failed');
      // All: the delivered one too.
      expect(await recover(true, at(10), 1, at(62))).toEqual({
        requeued: [{ id: delivered, nextAttemptAt: at(62) }],
        nextSince: null,
      });
      expect((await deliveries.findTarget(delivered))!.delivery).toMatchObject({ status: 'pending', attempts: 1 });
    });

    it('lists the event log newest first by keyset pages, without pings; filters by owner, type, time', async () => {
      const hook = await endpoint(customer);
      const placed = await event('order.placed', customer, null, at(0));
      await event('ping', null, hook.id, at(1));
      const pet = await event('pet.status_changed', null, null, at(2));
      const other = await event('order.placed', admin, null, at(3));
      const delivered = await event('message.delivered', customer, null, at(4));
      const ids = (page: { items: { id: string }[] }) => page.items.map((e) => e.id);
      const first = await subject.events.list({}, { limit: 3 });
      expect(ids(first)).toEqual([delivered.id, other.id, pet.id]);
      // Its feed position (null until settled) is the event log contract's (describeEventOutboxContract).
      expect(first.items[0]).toEqual({ ...delivered, seq: expect.any(Number), position: first.items[0]?.position });
      expect(first.nextAfterId).toBe(first.items[2].seq);
      const rest = await subject.events.list({}, { limit: 3, afterId: first.nextAfterId as number });
      expect(ids(rest)).toEqual([placed.id]);
      expect(rest.nextAfterId).toBeNull();
      expect(ids(await subject.events.list({ subjectOwnerId: customer }, { limit: 10 }))).toEqual([
        delivered.id,
        placed.id,
      ]);
      expect(ids(await subject.events.list({ types: ['order.placed'] }, { limit: 10 }))).toEqual([other.id, placed.id]);
      const types = ['order.placed', 'pet.status_changed'] as const;
      expect(ids(await subject.events.list({ types, subjectOwnerId: customer }, { limit: 10 }))).toEqual([placed.id]);
      const window = { createdAfter: at(2), createdBefore: at(4) };
      expect(ids(await subject.events.list(window, { limit: 10 }))).toEqual([other.id, pet.id]);
      const found = await subject.events.findById(pet.id);
      expect(found).toEqual({ ...pet, seq: expect.any(Number), position: found?.position });
      expect(await subject.events.findById(`00000000-0000-4000-8000-999999999999`)).toBeNull();
    });

    it('purges the events created before a time, a bounded batch at a time, with their deliveries', async () => {
      const hook = await endpoint(customer);
      const old = [];
      for (let i = 0; i < 5; i++) old.push(await event('order.placed', customer, null, at(-100 - i)));
      await event('ping', null, hook.id, at(-100));
      const kept = await event('order.placed', customer, null, at(0));
      const [oldDelivery] = await deliveries.createFor(old[0].id, [hook.id], NOW);
      const [keptDelivery] = await deliveries.createFor(kept.id, [hook.id], NOW);
      expect(await subject.uow.run(() => subject.events.purgeBatch(at(-1), 4))).toBe(4);
      expect(await subject.uow.run(() => subject.events.purgeBatch(at(-1), 4))).toBe(2);
      expect(await subject.uow.run(() => subject.events.purgeBatch(at(-1), 4))).toBe(0);
      expect((await subject.events.list({}, { limit: 10 })).items.map((e) => e.id)).toEqual([kept.id]);
      expect(await deliveries.findTarget(oldDelivery)).toBeNull();
      expect(await deliveries.findTarget(keptDelivery)).not.toBeNull();
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
