import {
  Account,
  InvalidValueError,
  TooManyWebhookEndpointsError,
  WebhookEndpointNotFoundError,
  WebhookUrlRefusedError,
  LIMITS,
} from '@petstore/domain';
import {
  anAccount,
  anOrder,
  CountingWebhookSecrets,
  inMemoryPetstore,
  InMemoryWebhookDeliveryQueue,
  InMemoryWebhookDeliveryRepository,
  InMemoryWebhookEndpointChanges,
  InMemoryWebhookEndpointRepository,
  InMemoryWebhookFanOutQueue,
  InMemoryWebhookOutboundBudget,
  ListedWebhookUrlPolicy,
  ScriptedWebhookSender,
} from '../../testing';
import { SubscriberCache, SubscriberCacheSettings } from './subscriber-cache';
import { EventQueries } from '../events/event-log.use-cases';
import { WebhookFanOut } from './webhook-fan-out';
import { WebhookEndpointConcurrency } from './endpoint-concurrency';
import { recoveryBatch, WebhookOutboundSettings, WebhookRotationSettings, WebhookSettings } from './webhook.ports';
import { DeliveryPendingError } from './webhook.errors';
import {
  RecoverWebhookDeliveries,
  RetryWebhookDelivery,
  WebhookDeliveryNotFoundError,
} from './webhook-delivery.use-cases';
import { EventRetention } from '../events/event.ports';
import {
  CreateWebhookEndpoint,
  DeleteWebhookEndpoint,
  DeliverWebhook,
  DisableFailingWebhookEndpoints,
  FanOutWebhookEvent,
  GiveUpWebhookDelivery,
  PingWebhookEndpoint,
  RotateWebhookSecret,
  UpdateWebhookEndpoint,
  WebhookEndpointQueries,
} from './webhook.use-cases';

/** Two retries 1 and 2 minutes apart, no jitter; endpoints failing for an hour are disabled. */
const SETTINGS = new WebhookSettings([60_000, 120_000], 10_000, 0, 3_600_000);

/** The webhook slice over in-memory fakes, wired as the composition root wires the real adapters. */
function webhooks(outbound = new WebhookOutboundSettings(), perEndpoint = new WebhookEndpointConcurrency(2)) {
  const store = inMemoryPetstore();
  const { db, uow, clock, events, eventOutbox: outbox } = store;
  const endpoints = new InMemoryWebhookEndpointRepository(db);
  const deliveries = new InMemoryWebhookDeliveryRepository(db);
  const queue = new InMemoryWebhookDeliveryQueue(db);
  const changes = new InMemoryWebhookEndpointChanges(db);
  const sender = new ScriptedWebhookSender();
  const urls = new ListedWebhookUrlPolicy();
  const subscribers = new SubscriberCache(endpoints, changes, clock, new SubscriberCacheSettings());
  // Webhooks consume the store's events, registered as EventsModule registers WebhooksModule's WebhookFanOut.
  const fanOutTrigger = new WebhookFanOut(subscribers, new InMemoryWebhookFanOutQueue(db), events);
  store.eventConsumers.register(fanOutTrigger);
  const secrets = new CountingWebhookSecrets();
  return {
    ...store,
    endpoints,
    deliveries,
    queue,
    sender,
    urls,
    changes,
    jobs: () => db.tables.webhookJobs,
    create: new CreateWebhookEndpoint(uow, endpoints, store.accounts, urls, secrets, clock, changes, subscribers),
    queries: new WebhookEndpointQueries(endpoints, deliveries),
    remove: new DeleteWebhookEndpoint(uow, endpoints, changes, subscribers),
    update: new UpdateWebhookEndpoint(uow, endpoints, store.accounts, urls, clock, changes, subscribers),
    rotate: new RotateWebhookSecret(uow, endpoints, secrets, new WebhookRotationSettings(3600), clock),
    subscribers,
    ping: new PingWebhookEndpoint(uow, endpoints, fanOutTrigger),
    fanOut: new FanOutWebhookEvent(
      uow,
      outbox,
      endpoints,
      deliveries,
      queue,
      clock,
      new InMemoryWebhookOutboundBudget(db, clock, outbound),
    ),
    deliver: new DeliverWebhook(
      uow,
      deliveries,
      endpoints,
      queue,
      sender,
      SETTINGS,
      clock,
      store.eventBodies,
      perEndpoint,
    ),
    giveUp: new GiveUpWebhookDelivery(deliveries, clock),
    disableFailing: new DisableFailingWebhookEndpoints(uow, endpoints, SETTINGS, clock, changes, subscribers),
    delivery: (id: number) => deliveries.findTarget(id).then((target) => target!.delivery),
    eventLog: new EventQueries(store.eventLog),
    retry: new RetryWebhookDelivery(uow, endpoints, deliveries, queue, clock),
    recover: new RecoverWebhookDeliveries(uow, endpoints, deliveries, queue, clock, new EventRetention(30)),
  };
}

type Slice = ReturnType<typeof webhooks>;

let hooks = 0;
/** An endpoint of `owner` on a URL of its own (an account has one endpoint per URL). */
async function subscribe(slice: Slice, owner: Account, events = ['order.placed']) {
  return slice.create.execute({ url: `https://hooks.example/${owner.id}/${++hooks}`, events, owner });
}

/** An order placed by `owner`, reported as the ordering use cases do (inside their transaction). */
async function orderPlaced(slice: Slice, owner: Account): Promise<string> {
  await slice.uow.run(() => slice.events.record('order.placed', anOrder().ownedBy(owner.id).build()));
  const fanOut = slice.jobs().find((job) => job.queue === 'fan-out');
  if (fanOut?.queue !== 'fan-out') throw new Error('no event was written');
  return fanOut.eventId;
}

describe('webhook use cases (in-memory fakes)', () => {
  let slice: Slice;
  let ada: Account;
  let bob: Account;
  let admin: Account;

  beforeEach(async () => {
    slice = webhooks();
    ada = await anAccount().saveIn(slice);
    bob = await anAccount().saveIn(slice);
    admin = await anAccount().admin().saveIn(slice);
  });

  describe('CreateWebhookEndpoint', () => {
    it('stores the endpoint with a new secret and announces the change at commit', async () => {
      const endpoint = await subscribe(slice, ada);
      expect(await slice.endpoints.findById(endpoint.id)).toMatchObject({ ownerId: ada.id, secret: 'whsec_1' });
      expect(slice.changes.announced).toBe(1);
    });

    it('refuses a URL the policy refuses, and stores nothing', async () => {
      slice.urls.refused.add('https://hooks.example/inside');
      const create = slice.create.execute({
        url: 'https://hooks.example/inside',
        events: ['order.placed'],
        owner: ada,
      });
      await expect(create).rejects.toBeInstanceOf(WebhookUrlRefusedError);
      expect(await slice.endpoints.countByOwner(ada.id)).toBe(0);
    });

    it(`refuses an account's endpoint beyond ${LIMITS.webhookEndpoints.max}`, async () => {
      for (let i = 0; i < LIMITS.webhookEndpoints.max; i++) await subscribe(slice, ada);
      await expect(subscribe(slice, ada)).rejects.toBeInstanceOf(TooManyWebhookEndpointsError);
      expect(await slice.endpoints.countByOwner(ada.id)).toBe(LIMITS.webhookEndpoints.max);
    });
  });

  describe("reads, deletes and pings: another account's endpoint is not found", () => {
    it('hides it from another customer, shows it to its owner and an administrator', async () => {
      const endpoint = await subscribe(slice, ada);
      await expect(slice.queries.get(endpoint.id, bob)).rejects.toBeInstanceOf(WebhookEndpointNotFoundError);
      await expect(slice.remove.execute(endpoint.id, bob)).rejects.toBeInstanceOf(WebhookEndpointNotFoundError);
      await expect(slice.ping.execute(endpoint.id, bob)).rejects.toBeInstanceOf(WebhookEndpointNotFoundError);
      expect((await slice.queries.get(endpoint.id, admin)).id).toBe(endpoint.id);
      expect((await slice.queries.list(bob, { limit: 10 })).items).toEqual([]);
    });

    it('deletes its own and announces it', async () => {
      const endpoint = await subscribe(slice, ada);
      await slice.remove.execute(endpoint.id, ada);
      expect(await slice.endpoints.findById(endpoint.id)).toBeNull();
      expect(slice.changes.announced).toBe(2);
    });

    it('a ping is one event for that endpoint alone, fanned out to it', async () => {
      const endpoint = await subscribe(slice, ada);
      const eventId = await slice.ping.execute(endpoint.id, ada);
      expect(await slice.fanOut.execute(eventId)).toBe(1);
      const [deliveryJob] = slice.jobs().filter((job) => job.queue === 'delivery');
      expect(deliveryJob).toEqual({ queue: 'delivery', deliveryId: expect.any(Number), at: null });
    });
  });

  describe('WebhookFanOut (the events recorded) and FanOutWebhookEvent', () => {
    it('writes the event of a change no endpoint may receive to the log, without a fan-out job', async () => {
      const order = anOrder().ownedBy(ada.id).build();
      await slice.uow.run(() => slice.events.record('order.placed', order));
      expect(slice.jobs()).toEqual([]);
      const [logged] = (await slice.eventLog.list(ada, {}, { limit: 10 })).items;
      expect(logged).toMatchObject({ type: 'order.placed', subjectOwnerId: ada.id, endpointId: null });
      expect(JSON.parse(logged.body)).toEqual({
        type: 'order.placed',
        timestamp: slice.clock.now().toISOString(),
        data: { id: order.id, petId: order.petId, complete: false, version: 1 },
      });
    });

    it('a rolled-back change leaves no event', async () => {
      const failing = slice.uow.run(async () => {
        await slice.events.record('order.placed', anOrder().ownedBy(ada.id).build());
        throw new Error('rolled back');
      });
      await expect(failing).rejects.toThrow('rolled back');
      expect((await slice.eventLog.list(admin, {}, { limit: 10 })).items).toEqual([]);
    });

    it("sends an order's event to its owner's and administrators' endpoints, once however often it runs", async () => {
      const adas = await subscribe(slice, ada);
      await subscribe(slice, bob); // another customer's order is not bob's business
      const stores = await subscribe(slice, admin);
      const eventId = await orderPlaced(slice, ada);
      expect(await slice.fanOut.execute(eventId)).toBe(2);
      expect(await slice.fanOut.execute(eventId)).toBe(0); // a retried job creates nothing more
      const page = await slice.queries.deliveries(adas.id, ada, { limit: 10 });
      expect(page.items).toEqual([expect.objectContaining({ eventId, type: 'order.placed', status: 'pending' })]);
      expect((await slice.queries.deliveries(stores.id, admin, { limit: 10 })).items).toHaveLength(1);
    });
  });

  describe("FanOutWebhookEvent and each account's outbound budget (issue 48, item 8)", () => {
    /** The fan-out of each event not fanned out yet, in order; the deliveries (and their jobs) it made. */
    async function fanOutAll(budgeted: Slice) {
      const done = new Set<string>();
      const results = [];
      for (const job of budgeted.jobs()) {
        if (job.queue !== 'fan-out' || done.has(job.eventId)) continue;
        done.add(job.eventId);
        results.push(await budgeted.fanOut.run(job.eventId));
      }
      return results;
    }

    it("defers an account's deliveries beyond its budget (none dropped), and no other account's", async () => {
      // Two a minute: a minute's worth and one at once, then one every 30 s.
      const budgeted = webhooks(new WebhookOutboundSettings(2));
      const [carol, dave] = [await anAccount().saveIn(budgeted), await anAccount().saveIn(budgeted)];
      const [carols, daves] = [await subscribe(budgeted, carol), await subscribe(budgeted, dave)];
      const place = (owner: Account) =>
        budgeted.uow.run(() => budgeted.events.record('order.placed', anOrder().ownedBy(owner.id).build()));
      for (let i = 0; i < 5; i++) await place(carol);
      await place(dave);
      const results = await fanOutAll(budgeted);
      expect(results.map((r) => r.created)).toEqual([1, 1, 1, 1, 1, 1]);
      expect(results.map((r) => r.deferred)).toEqual([0, 0, 0, 1, 1, 0]);
      const now = budgeted.clock.now().getTime();
      const due = async (endpointId: number, owner: Account) =>
        (await budgeted.queries.deliveries(endpointId, owner, { limit: 10 })).items
          .map((d) => ((d.nextAttemptAt?.getTime() ?? Number.NaN) - now) / 1000)
          .sort((a, b) => a - b);
      expect(await due(carols.id, carol)).toEqual([0, 0, 0, 30, 60]);
      expect(await due(daves.id, dave)).toEqual([0]);
      // A deferred delivery's job waits for its time, and names it (a redelivery that moves it earlier voids it).
      const jobs = budgeted.jobs().filter((job) => job.queue === 'delivery');
      expect(jobs.filter((job) => job.queue === 'delivery' && job.at !== null)).toEqual([
        expect.objectContaining({ at: new Date(now + 30_000), due: new Date(now + 30_000) }),
        expect.objectContaining({ at: new Date(now + 60_000), due: new Date(now + 60_000) }),
      ]);
      expect(jobs).toHaveLength(6);
    });

    it('a ping spends no outbound budget (its request did)', async () => {
      const budgeted = webhooks(new WebhookOutboundSettings(1));
      const carol = await anAccount().saveIn(budgeted);
      const endpoint = await subscribe(budgeted, carol);
      for (let i = 0; i < 4; i++) {
        expect(await budgeted.fanOut.run(await budgeted.ping.execute(endpoint.id, carol))).toEqual({
          created: 1,
          deferred: 0,
        });
      }
    });
  });

  describe('UpdateWebhookEndpoint', () => {
    it('changes the URL and the events; the next change is judged by them (announced at commit)', async () => {
      const endpoint = await subscribe(slice, ada);
      expect(await slice.subscribers.hasSubscribers('order.completed', ada.id)).toBe(false); // cached
      const url = 'https://hooks.example/moved';
      const updated = await slice.update.execute({ id: endpoint.id, viewer: ada, url, events: ['order.completed'] });
      expect(updated.toSnapshot()).toEqual({ ...endpoint.toSnapshot(), url, events: ['order.completed'] });
      expect((await slice.endpoints.findById(endpoint.id))?.toSnapshot()).toEqual(updated.toSnapshot());
      expect(slice.changes.announced).toBe(2);
      expect(await slice.subscribers.hasSubscribers('order.completed', ada.id)).toBe(true);
      expect(await slice.subscribers.hasSubscribers('order.placed', ada.id)).toBe(false);
    });

    it("refuses a URL the policy refuses, another's endpoint (not found), a customer's admin-only event", async () => {
      const endpoint = await subscribe(slice, ada);
      slice.urls.refused.add('https://hooks.example/inside');
      const inside = slice.update.execute({ id: endpoint.id, viewer: ada, url: 'https://hooks.example/inside' });
      await expect(inside).rejects.toBeInstanceOf(WebhookUrlRefusedError);
      const others = slice.update.execute({ id: endpoint.id, viewer: bob, url: 'https://hooks.example/inside' });
      await expect(others).rejects.toBeInstanceOf(WebhookEndpointNotFoundError);
      const missing = slice.update.execute({ id: endpoint.id + 100, viewer: admin, events: ['order.placed'] });
      await expect(missing).rejects.toBeInstanceOf(WebhookEndpointNotFoundError);
      // An administrator edits a customer's endpoint by the customer's rights.
      const petEvents = slice.update.execute({ id: endpoint.id, viewer: admin, events: ['pet.status_changed'] });
      await expect(petEvents).rejects.toBeInstanceOf(InvalidValueError);
      expect((await slice.endpoints.findById(endpoint.id))?.toSnapshot()).toEqual(endpoint.toSnapshot());
      expect(slice.changes.announced).toBe(1);
      const byAdmin = await slice.update.execute({ id: endpoint.id, viewer: admin, events: ['order.cancelled'] });
      expect(byAdmin.events).toEqual(['order.cancelled']);
    });

    it('enables a disabled endpoint again: it receives events; its old failing streak is over', async () => {
      const endpoint = await subscribe(slice, ada);
      await slice.fanOut.execute(await orderPlaced(slice, ada));
      const job = slice.jobs().find((j) => j.queue === 'delivery');
      if (job?.queue !== 'delivery') throw new Error('no delivery');
      slice.sender.answer({ statusCode: 500, error: null });
      await slice.deliver.execute(job.deliveryId);
      slice.clock.advanceMinutes(61);
      expect(await slice.disableFailing.execute()).toEqual({ disabled: 1 });
      expect(await slice.subscribers.hasSubscribers('order.placed', ada.id)).toBe(false);
      const enabled = await slice.update.execute({ id: endpoint.id, viewer: ada, enabled: true });
      expect(enabled.disabledAt).toBeNull();
      expect(await slice.subscribers.hasSubscribers('order.placed', ada.id)).toBe(true);
      expect(await slice.disableFailing.execute()).toEqual({ disabled: 0 }); // the streak starts afresh
      const paused = await slice.update.execute({ id: endpoint.id, viewer: ada, enabled: false });
      expect(paused.disabledAt).toEqual(slice.clock.now());
      expect(await slice.subscribers.hasSubscribers('order.placed', ada.id)).toBe(false);
    });
  });

  describe('RotateWebhookSecret', () => {
    async function attemptSecrets(): Promise<string[]> {
      const before = slice.jobs().length;
      await slice.uow.run(() => slice.events.record('order.placed', anOrder().ownedBy(ada.id).build()));
      const fanOut = slice
        .jobs()
        .slice(before)
        .find((j) => j.queue === 'fan-out');
      if (fanOut?.queue !== 'fan-out') throw new Error('no event');
      await slice.fanOut.execute(fanOut.eventId);
      const job = slice
        .jobs()
        .slice(before)
        .find((j) => j.queue === 'delivery');
      if (job?.queue !== 'delivery') throw new Error('no delivery');
      await slice.deliver.execute(job.deliveryId);
      return slice.sender.requests.at(-1)!.secrets;
    }

    it('signs with the new and the old secret for the window, then the new one only', async () => {
      const endpoint = await subscribe(slice, ada);
      const rotated = await slice.rotate.execute(endpoint.id, ada);
      expect(rotated.endpoint.secret).toBe('whsec_2');
      expect(rotated.previousSecretExpiresAt).toEqual(new Date(slice.clock.now().getTime() + 3_600_000));
      expect(await attemptSecrets()).toEqual(['whsec_2', 'whsec_1']);
      slice.clock.advanceMinutes(60);
      expect(await attemptSecrets()).toEqual(['whsec_2']);
    });

    it('a rotation during a window replaces the previous secret; a shorter window may be asked for', async () => {
      const endpoint = await subscribe(slice, ada);
      await slice.rotate.execute(endpoint.id, ada);
      const again = await slice.rotate.execute(endpoint.id, admin, 60);
      expect(again.previousSecretExpiresAt).toEqual(new Date(slice.clock.now().getTime() + 60_000));
      expect(await attemptSecrets()).toEqual(['whsec_3', 'whsec_2']);
      slice.clock.advanceMinutes(1);
      expect(await attemptSecrets()).toEqual(['whsec_3']);
      await slice.rotate.execute(endpoint.id, ada, 0);
      expect(await attemptSecrets()).toEqual(['whsec_4']);
    });

    it("refuses another's endpoint (not found) and a window beyond the setting", async () => {
      const endpoint = await subscribe(slice, ada);
      await expect(slice.rotate.execute(endpoint.id, bob)).rejects.toBeInstanceOf(WebhookEndpointNotFoundError);
      await expect(slice.rotate.execute(endpoint.id, ada, 3601)).rejects.toBeInstanceOf(InvalidValueError);
      await expect(slice.rotate.execute(endpoint.id, ada, -1)).rejects.toBeInstanceOf(InvalidValueError);
      expect((await slice.endpoints.findById(endpoint.id))?.secret).toBe('whsec_1');
    });
  });

  describe('DeliverWebhook', () => {
    async function pendingDelivery(): Promise<number> {
      await subscribe(slice, ada);
      await slice.fanOut.execute(await orderPlaced(slice, ada));
      const job = slice.jobs().find((j) => j.queue === 'delivery');
      if (job?.queue !== 'delivery') throw new Error('no delivery');
      return job.deliveryId;
    }

    it("sends the event's stored body with its feed position added (EventBodies, as the event stream)", async () => {
      const id = await pendingDelivery();
      slice.sender.answer({ statusCode: 204, error: null });
      expect(await slice.deliver.execute(id)).toBe('delivered');
      const [request] = slice.sender.requests;
      const event = slice.db.tables.webhookEvents.get(request.eventId);
      if (!event) throw new Error('no event');
      // The fake's positions in clear: its transaction stood for by its seq (PlainFeedPositionTokens).
      expect(JSON.parse(request.body)).toEqual({ ...JSON.parse(event.body), position: `${event.seq}:${event.seq}` });
      expect(request.body.startsWith(event.body.slice(0, -1))).toBe(true);
    });

    it('waits while the event is not settled in the feed: no attempt, the same job again a second later', async () => {
      const id = await pendingDelivery();
      const deliveries = Object.create(slice.deliveries) as typeof slice.deliveries;
      deliveries.findTarget = async (deliveryId) => {
        const target = await slice.deliveries.findTarget(deliveryId);
        return target && { ...target, settled: false };
      };
      const { uow, endpoints, queue, sender, clock, eventBodies } = slice;
      const waiting = new DeliverWebhook(uow, deliveries, endpoints, queue, sender, SETTINGS, clock, eventBodies);
      const jobsBefore = slice.jobs().length;
      expect(await waiting.execute(id)).toBe('deferred');
      const later = new Date(slice.clock.now().getTime() + WebhookSettings.SETTLE_WAIT_MS);
      expect(slice.jobs().slice(jobsBefore)).toEqual([{ queue: 'delivery', deliveryId: id, at: later }]);
      expect(sender.requests).toEqual([]);
      expect(await slice.delivery(id)).toMatchObject({ status: 'pending', attempts: 0 });
      // Settled, the job sends it.
      slice.sender.answer({ statusCode: 204, error: null });
      expect(await slice.deliver.execute(id)).toBe('delivered');
    });

    it('a 2xx delivers it: the signed request carries the event, nothing more is scheduled', async () => {
      const id = await pendingDelivery();
      slice.sender.answer({ statusCode: 204, error: null });
      expect(await slice.deliver.execute(id)).toBe('delivered');
      expect(slice.sender.requests).toEqual([expect.objectContaining({ secrets: ['whsec_1'], timeoutMs: 10_000 })]);
      expect(await slice.delivery(id)).toMatchObject({ status: 'delivered', attempts: 1, lastStatusCode: 204 });
      expect(await slice.deliver.execute(id)).toBe('settled'); // a rerun of the job sends nothing
      expect(slice.sender.requests).toHaveLength(1);
    });

    it('an endpoint gets at most its share of attempts at once; the others are deferred, not sent', async () => {
      await subscribe(slice, ada);
      const other = await subscribe(slice, bob);
      for (const owner of [ada, ada, ada, bob]) {
        await slice.uow.run(() => slice.events.record('order.placed', anOrder().ownedBy(owner.id).build()));
        const fanOut = slice
          .jobs()
          .filter((job) => job.queue === 'fan-out')
          .at(-1);
        if (fanOut?.queue !== 'fan-out') throw new Error('no event was written');
        await slice.fanOut.execute(fanOut.eventId);
      }
      const deliveryJobs = slice.jobs().filter((j) => j.queue === 'delivery');
      const ids = deliveryJobs.map((j) => (j.queue === 'delivery' ? j.deliveryId : 0));
      const endpointOf = async (id: number) => (await slice.delivery(id)).endpointId;
      const adas: number[] = [];
      for (const id of ids) if ((await endpointOf(id)) !== other.id) adas.push(id);
      const [bobs] = ids.filter((id) => !adas.includes(id));
      expect(adas).toHaveLength(3);
      const release = slice.sender.hold(); // ada's receiver is slow
      const first = [slice.deliver.execute(adas[0]), slice.deliver.execute(adas[1])];
      for (let turn = 0; turn < 100 && slice.sender.requests.length < 2; turn++) await new Promise(setImmediate);
      const jobsBefore = slice.jobs().length;
      expect(await slice.deliver.execute(adas[2])).toBe('deferred');
      // Deferred: no request, still pending and unattempted, a job for a moment later (100 ms to 10 s).
      expect(slice.sender.requests).toHaveLength(2);
      expect(await slice.delivery(adas[2])).toMatchObject({ status: 'pending', attempts: 0 });
      const [later] = slice.jobs().slice(jobsBefore);
      if (later?.queue !== 'delivery' || !later.at) throw new Error('no job for later');
      expect(later.deliveryId).toBe(adas[2]);
      const wait = later.at.getTime() - slice.clock.now().getTime();
      expect(wait).toBeGreaterThanOrEqual(100);
      expect(wait).toBeLessThanOrEqual(11_000);
      // Another endpoint is not held up by ada's.
      const bobsAttempt = slice.deliver.execute(bobs);
      for (let turn = 0; turn < 100 && slice.sender.requests.length < 3; turn++) await new Promise(setImmediate);
      expect(slice.sender.requests.map((r) => r.url)).toEqual([expect.any(String), expect.any(String), other.url]);
      release();
      expect(await Promise.all([...first, bobsAttempt])).toEqual(['delivered', 'delivered', 'delivered']);
      // The slots are given back: ada's deferred delivery goes now.
      expect(await slice.deliver.execute(adas[2])).toBe('delivered');
    });

    it('a failure is retried on the schedule, then the delivery fails', async () => {
      const id = await pendingDelivery();
      slice.sender.answer(
        { statusCode: 500, error: null },
        { statusCode: null, error: 'timeout' },
        {
          statusCode: 503,
          error: null,
        },
      );
      const jobsBefore = slice.jobs().length;
      expect(await slice.deliver.execute(id)).toBe('retrying');
      const retryAt = new Date(slice.clock.now().getTime() + 60_000);
      expect(slice.jobs().slice(jobsBefore)).toEqual([
        { queue: 'delivery', deliveryId: id, at: retryAt, due: retryAt },
      ]);
      expect(await slice.deliver.execute(id)).toBe('retrying');
      expect(await slice.deliver.execute(id)).toBe('failed');
      expect(await slice.delivery(id)).toMatchObject({ status: 'failed', attempts: 3, nextAttemptAt: null });
      expect((await slice.delivery(id)).lastError).not.toBeNull();
    });

    it('an endpoint failing longer than the bound is disabled; its pending delivery then fails unsent', async () => {
      const id = await pendingDelivery();
      slice.sender.answer({ statusCode: 500, error: null });
      await slice.deliver.execute(id);
      slice.clock.advanceMinutes(61);
      expect(await slice.disableFailing.execute()).toEqual({ disabled: 1 });
      expect(slice.changes.announced).toBe(2); // created, then disabled
      expect(await slice.deliver.execute(id)).toBe('failed');
      expect(slice.sender.requests).toHaveLength(1);
    });

    it('a delivery whose job the queue gave up on becomes failed, unless already settled', async () => {
      const id = await pendingDelivery();
      expect(await slice.giveUp.execute(id)).toBe(true);
      expect(await slice.delivery(id)).toMatchObject({ status: 'failed' });
      expect(await slice.giveUp.execute(id)).toBe(false);
    });
  });

  describe('RetryWebhookDelivery', () => {
    it('retries a failed delivery when asked: pending, queued now; refuses a pending one, finds no other', async () => {
      const endpoint = await subscribe(slice, ada);
      await slice.fanOut.execute(await orderPlaced(slice, ada));
      const job = slice.jobs().find((j) => j.queue === 'delivery');
      if (job?.queue !== 'delivery') throw new Error('no delivery');
      const id = job.deliveryId;
      await expect(slice.retry.execute(endpoint.id, id, ada)).rejects.toBeInstanceOf(DeliveryPendingError);
      slice.sender.answer(...[1, 2, 3].map(() => ({ statusCode: 500, error: null })));
      for (let i = 0; i < 3; i++) await slice.deliver.execute(id);
      expect(await slice.delivery(id)).toMatchObject({ status: 'failed', attempts: 3 });
      await expect(slice.retry.execute(endpoint.id, id, bob)).rejects.toBeInstanceOf(WebhookEndpointNotFoundError);
      await expect(slice.retry.execute(endpoint.id, id + 1, ada)).rejects.toBeInstanceOf(WebhookDeliveryNotFoundError);
      const jobsBefore = slice.jobs().length;
      expect(await slice.retry.execute(endpoint.id, id, ada)).toMatchObject({ id, status: 'pending', attempts: 3 });
      expect(slice.jobs().slice(jobsBefore)).toEqual([
        { queue: 'delivery', deliveryId: id, at: null, due: slice.clock.now() },
      ]);
      expect(await slice.deliver.execute(id)).toBe('delivered'); // the receiver is back
      expect(slice.sender.requests[3].eventId).toBe(slice.sender.requests[0].eventId); // the same webhook-id
      expect(await slice.delivery(id)).toMatchObject({ status: 'delivered', attempts: 4 });
      expect(await slice.retry.execute(endpoint.id, id, admin)).toMatchObject({ status: 'pending' }); // resent
    });

    it('sends a pending delivery waiting for its back-off now; the job it waited for makes no attempt', async () => {
      const endpoint = await subscribe(slice, ada);
      await slice.fanOut.execute(await orderPlaced(slice, ada));
      const job = slice.jobs().find((j) => j.queue === 'delivery');
      if (job?.queue !== 'delivery') throw new Error('no delivery');
      const id = job.deliveryId;
      slice.sender.answer({ statusCode: 503, error: null }, { statusCode: 503, error: null });
      expect(await slice.deliver.execute(id)).toBe('retrying');
      const waitedFor = slice.jobs().at(-1);
      if (waitedFor?.queue !== 'delivery' || !waitedFor.due) throw new Error('no retry job');
      expect(waitedFor.due).toEqual(new Date(slice.clock.now().getTime() + 60_000)); // the first back-off, 1 minute
      slice.clock.advanceMinutes(0.5);
      const now = slice.clock.now();
      expect(await slice.retry.execute(endpoint.id, id, ada)).toMatchObject({ status: 'pending', nextAttemptAt: now });
      expect(slice.jobs().at(-1)).toEqual({ queue: 'delivery', deliveryId: id, at: null, due: now });
      // Due now: a second retry is refused until the attempt is recorded.
      await expect(slice.retry.execute(endpoint.id, id, ada)).rejects.toBeInstanceOf(DeliveryPendingError);
      expect(await slice.deliver.execute(id, now)).toBe('retrying');
      // The back-off restarts from that attempt (the second delay, 2 minutes); the old job sends nothing.
      expect(await slice.delivery(id)).toMatchObject({ attempts: 2, nextAttemptAt: new Date(now.getTime() + 120_000) });
      slice.clock.advanceMinutes(0.5);
      expect(await slice.deliver.execute(id, waitedFor.due)).toBe('settled');
      expect(slice.sender.requests).toHaveLength(2);
    });

    it('spends the outbound budget (admit) once it sends: not on a pending delivery; a refusal undoes it', async () => {
      const endpoint = await subscribe(slice, ada);
      const id = await deliveryOf(slice, await orderPlacedNow(slice, ada));
      const admit = jest.fn(async () => undefined);
      await expect(slice.retry.execute(endpoint.id, id, ada, admit)).rejects.toBeInstanceOf(DeliveryPendingError);
      await expect(slice.retry.execute(endpoint.id, id + 1, ada, admit)).rejects.toBeInstanceOf(
        WebhookDeliveryNotFoundError,
      );
      expect(admit).not.toHaveBeenCalled();
      slice.sender.answer({ statusCode: 200, error: null });
      expect(await slice.deliver.execute(id)).toBe('delivered');
      const jobsBefore = slice.jobs().length;
      const refuse = jest.fn(async () => {
        throw new Error('over the budget');
      });
      await expect(slice.retry.execute(endpoint.id, id, ada, refuse)).rejects.toThrow('over the budget');
      expect(await slice.delivery(id)).toMatchObject({ status: 'delivered' });
      expect(slice.jobs()).toHaveLength(jobsBefore);
      expect(await slice.retry.execute(endpoint.id, id, ada, admit)).toMatchObject({ status: 'pending' });
      expect(admit).toHaveBeenCalledTimes(1);
    });
  });

  describe('RecoverWebhookDeliveries', () => {
    /** Deliveries of `endpoint` in each state: failed, waiting for a back-off, delivered, due (never tried), a ping. */
    async function deliveriesInEveryState(endpointId: number) {
      const failed = await deliveryOf(slice, await orderPlacedNow(slice, ada));
      slice.sender.answer(...[1, 2, 3].map(() => ({ statusCode: 500, error: null })));
      for (let i = 0; i < 3; i++) await slice.deliver.execute(failed);
      const waiting = await deliveryOf(slice, await orderPlacedNow(slice, ada));
      slice.sender.answer({ statusCode: 503, error: null });
      expect(await slice.deliver.execute(waiting)).toBe('retrying');
      const delivered = await deliveryOf(slice, await orderPlacedNow(slice, ada));
      slice.sender.answer({ statusCode: 204, error: null });
      expect(await slice.deliver.execute(delivered)).toBe('delivered');
      const due = await deliveryOf(slice, await orderPlacedNow(slice, ada));
      await slice.ping.execute(endpointId, ada);
      const ping = await deliveryOf(slice, lastFanOut(slice));
      slice.sender.answer({ statusCode: 500, error: null });
      await slice.deliver.execute(ping);
      expect(await slice.delivery(ping)).toMatchObject({ type: 'ping', status: 'failed' });
      return { failed, waiting, delivered, due, ping };
    }

    it('queues the failed and the waiting deliveries since a time at once, each once; never a ping', async () => {
      const endpoint = await subscribe(slice, ada);
      const before = await deliveryOf(slice, await orderPlacedNow(slice, ada));
      slice.sender.answer(...[1, 2, 3].map(() => ({ statusCode: 500, error: null })));
      for (let i = 0; i < 3; i++) await slice.deliver.execute(before);
      slice.clock.advanceMinutes(10);
      const since = slice.clock.now();
      const { failed, waiting, delivered, due } = await deliveriesInEveryState(endpoint.id);
      const other = await subscribe(slice, ada);
      const elsewhere = await deliveryOf(slice, await orderPlacedNow(slice, ada), other.id);
      slice.sender.answer({ statusCode: 500, error: null });
      await slice.deliver.execute(elsewhere);
      slice.clock.advanceMinutes(0.1); // the waiting one's back-off (1 minute) is still ahead
      const now = slice.clock.now();
      const jobsBefore = slice.jobs().length;
      const admit = jest.fn(async () => undefined);

      expect(await slice.recover.execute(endpoint.id, { since, all: false }, ada, admit)).toEqual({
        queued: 2,
        nextSince: null,
      });
      expect(admit).toHaveBeenCalledTimes(1);
      expect(slice.jobs().slice(jobsBefore)).toEqual([
        { queue: 'delivery', deliveryId: failed, at: null, due: now },
        { queue: 'delivery', deliveryId: waiting, at: null, due: now },
      ]);
      expect(await slice.delivery(failed)).toMatchObject({ status: 'pending', attempts: 3, nextAttemptAt: now });
      expect(await slice.delivery(waiting)).toMatchObject({ status: 'pending', attempts: 1, nextAttemptAt: now });
      expect(await slice.delivery(delivered)).toMatchObject({ status: 'delivered' });
      expect(await slice.delivery(before)).toMatchObject({ status: 'failed' });
      expect(await slice.delivery(elsewhere)).toMatchObject({ status: 'pending', attempts: 1 });
      expect((await slice.delivery(due)).nextAttemptAt!.getTime()).toBeLessThan(now.getTime());
      // Asked again at once: everything it found is due already, nothing is queued twice (one more unit spent).
      expect(await slice.recover.execute(endpoint.id, { since, all: false }, ada, admit)).toEqual({
        queued: 0,
        nextSince: null,
      });
      expect(slice.jobs()).toHaveLength(jobsBefore + 2);
      // An administrator may, as for the other operations; another customer finds no such endpoint.
      await expect(slice.recover.execute(endpoint.id, { since, all: false }, bob)).rejects.toBeInstanceOf(
        WebhookEndpointNotFoundError,
      );
      expect(await slice.recover.execute(endpoint.id, { since, all: false }, admin)).toEqual({
        queued: 0,
        nextSince: null,
      });
    });

    it('with `all`, queues the delivered deliveries too', async () => {
      const endpoint = await subscribe(slice, ada);
      const since = slice.clock.now();
      const { failed, waiting, delivered, due, ping } = await deliveriesInEveryState(endpoint.id);
      const jobsBefore = slice.jobs().length;
      expect(await slice.recover.execute(endpoint.id, { since, all: true }, ada)).toEqual({
        queued: 3,
        nextSince: null,
      });
      const queued = slice.jobs().slice(jobsBefore);
      expect(queued.map((job) => (job.queue === 'delivery' ? job.deliveryId : 0))).toEqual([
        failed,
        waiting,
        delivered,
      ]);
      expect(await slice.delivery(delivered)).toMatchObject({ status: 'pending', attempts: 1 });
      expect(queued).not.toContainEqual(expect.objectContaining({ deliveryId: due }));
      expect(queued).not.toContainEqual(expect.objectContaining({ deliveryId: ping }));
    });

    it('refuses a `since` older than the retention of the events, and spends nothing on a refusal', async () => {
      const endpoint = await subscribe(slice, ada);
      const failed = await deliveryOf(slice, await orderPlacedNow(slice, ada));
      slice.sender.answer(...[1, 2, 3].map(() => ({ statusCode: 500, error: null })));
      for (let i = 0; i < 3; i++) await slice.deliver.execute(failed);
      const admit = jest.fn(async () => undefined);
      const daysAgo = (days: number) => new Date(slice.clock.now().getTime() - days * 24 * 3600 * 1000);
      const tooOld = slice.recover.execute(endpoint.id, { since: daysAgo(30.01), all: false }, ada, admit);
      await expect(tooOld).rejects.toBeInstanceOf(InvalidValueError);
      await expect(tooOld).rejects.toMatchObject({ field: 'since', message: expect.stringContaining('30 days') });
      await expect(
        slice.recover.execute(endpoint.id + 100, { since: daysAgo(1), all: false }, ada, admit),
      ).rejects.toBeInstanceOf(WebhookEndpointNotFoundError);
      expect(admit).not.toHaveBeenCalled();
      // A refused budget (admit throws): nothing changes, nothing is queued.
      const jobsBefore = slice.jobs().length;
      const refuse = async () => {
        throw new Error('over the budget');
      };
      await expect(slice.recover.execute(endpoint.id, { since: daysAgo(30), all: false }, ada, refuse)).rejects.toThrow(
        'over the budget',
      );
      expect(await slice.delivery(failed)).toMatchObject({ status: 'failed' });
      expect(slice.jobs()).toHaveLength(jobsBefore);
      expect(await slice.recover.execute(endpoint.id, { since: daysAgo(30), all: false }, ada, admit)).toEqual({
        queued: 1,
        nextSince: null,
      });
    });
  });
});

describe('recoveryBatch', () => {
  const t = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute));
  const rows = (...minutes: number[]) => minutes.map((minute, id) => ({ id, at: t(minute) }));
  const batch = (all: ReturnType<typeof rows>, limit: number) => {
    const { batch: taken, nextSince } = recoveryBatch(all, limit, (row) => row.at);
    return { ids: taken.map((row) => row.id), nextSince };
  };

  it('takes up to the limit, and says where to continue when there was one more', () => {
    expect(batch(rows(1, 2), 2)).toEqual({ ids: [0, 1], nextSince: null });
    expect(batch(rows(1, 2, 3), 2)).toEqual({ ids: [0, 1], nextSince: t(3) });
  });

  it('leaves the deliveries of the instant it continues from to the next call, unless they fill the batch', () => {
    expect(batch(rows(1, 3, 3, 3), 3)).toEqual({ ids: [0], nextSince: t(3) });
    expect(batch(rows(3, 3, 3, 3), 3)).toEqual({ ids: [0, 1, 2], nextSince: t(3) });
  });
});

/** The event of the last fan-out job sent. */
function lastFanOut(slice: Slice): string {
  const fanOut = [...slice.jobs()].reverse().find((job) => job.queue === 'fan-out');
  if (fanOut?.queue !== 'fan-out') throw new Error('no event was written');
  return fanOut.eventId;
}

/** An order placed by `owner` now: its event's id. */
async function orderPlacedNow(slice: Slice, owner: Account): Promise<string> {
  await slice.uow.run(() => slice.events.record('order.placed', anOrder().ownedBy(owner.id).build()));
  return lastFanOut(slice);
}

/** Fans the event out, and returns its delivery to `endpointId` (else to the only endpoint that receives it). */
async function deliveryOf(slice: Slice, eventId: string, endpointId?: number): Promise<number> {
  const before = slice.jobs().length;
  await slice.fanOut.execute(eventId);
  for (const job of slice.jobs().slice(before)) {
    if (job.queue !== 'delivery') continue;
    if (endpointId === undefined || (await slice.delivery(job.deliveryId)).endpointId === endpointId) {
      return job.deliveryId;
    }
  }
  throw new Error('no delivery was created');
}
