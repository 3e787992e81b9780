import { Account, InvalidValueError, MessageNotFoundError } from '@petstore/domain';
import { anAccount, inMemoryPetstore, InMemoryPetstore } from '../../testing';
import {
  DeliverMessage,
  DeliveryFailedError,
  GiveUpMessage,
  MessageDeliverySettings,
  MessageQueries,
  QueueMessage,
} from './message.use-cases';

describe('message use cases (in-memory ports)', () => {
  let store: InMemoryPetstore;
  let alice: Account;
  let bob: Account;
  let admin: Account;
  beforeEach(async () => {
    store = inMemoryPetstore();
    alice = await anAccount().customer().saveIn(store);
    bob = await anAccount().customer().saveIn(store);
    admin = await anAccount().admin().saveIn(store);
  });

  const queue = (text = 'Hello', ownerId = alice.id) =>
    new QueueMessage(store.uow, store.messages, store.messageQueue, store.clock).execute({ text, ownerId });
  const deliver = (messageId: string, attempt = 1, isLast = false, settings = new MessageDeliverySettings(3, 1_000)) =>
    new DeliverMessage(store.messages, store.transport, store.clock, settings, store.uow, store.events).execute({
      messageId,
      attempt,
      isLast,
    });
  const stored = (id: string) => store.db.tables.messages.get(id);

  describe('QueueMessage', () => {
    it('stores the message as queued and queues its delivery job, together', async () => {
      const message = await queue('Is Rex still available?');
      expect(message.toSnapshot()).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        text: 'Is Rex still available?',
        status: 'queued',
        createdAt: store.clock.now(),
        deliveredAt: null,
        ownerId: alice.id,
        version: 1,
      });
      expect((await store.messages.findById(message.id))?.status).toBe('queued');
      expect(store.db.tables.deliveryJobs).toEqual([message.id]);
    });

    it('refuses an empty or too long text: no message and no job', async () => {
      await expect(queue('')).rejects.toBeInstanceOf(InvalidValueError);
      await expect(queue('x'.repeat(2001))).rejects.toMatchObject({ field: 'message' });
      expect(store.db.tables.messages.size).toBe(0);
      expect(store.db.tables.deliveryJobs).toEqual([]);
    });

    it('a job that cannot be queued rolls the message back', async () => {
      const failure = new Error('queue down');
      jest.spyOn(store.messageQueue, 'enqueue').mockRejectedValueOnce(failure);
      await expect(queue()).rejects.toBe(failure);
      expect(store.db.tables.messages.size).toBe(0);
    });
  });

  describe('MessageQueries', () => {
    it('shows a message to its owner and administrators; to anyone else it is not found', async () => {
      const message = await queue();
      const queries = new MessageQueries(store.messages);
      expect((await queries.get(message.id, alice)).id).toBe(message.id);
      expect((await queries.get(message.id, admin)).id).toBe(message.id);
      await expect(queries.get(message.id, bob)).rejects.toBeInstanceOf(MessageNotFoundError);
      await expect(queries.get(store.messages.nextId(), admin)).rejects.toBeInstanceOf(MessageNotFoundError);
    });

    it('lists oldest first, by status', async () => {
      const first = await queue('one');
      const second = await queue('two', bob.id);
      await deliver(second.id);
      const queries = new MessageQueries(store.messages);
      expect((await queries.list({}, { limit: 10 })).items.map((m) => m.id)).toEqual([first.id, second.id]);
      expect((await queries.list({ status: 'queued' }, { limit: 10 })).items.map((m) => m.id)).toEqual([first.id]);
    });
  });

  describe('DeliverMessage', () => {
    it("hands the message to the transport and records it delivered at the clock's time", async () => {
      const message = await queue();
      expect(await deliver(message.id)).toBe('delivered');
      expect(store.transport.delivered.map((m) => m.id)).toEqual([message.id]);
      expect(stored(message.id)).toMatchObject({ status: 'delivered', deliveredAt: store.clock.now(), attempts: 1 });
    });

    it('records one message.delivered event about its owner with the delivery; a failed attempt none', async () => {
      const failing = await queue('first');
      store.transport.failWith = new Error('inbox down');
      await expect(deliver(failing.id)).rejects.toBeInstanceOf(DeliveryFailedError);
      expect(store.db.tables.webhookEvents.size).toBe(0);
      store.transport.failWith = null;
      const message = await queue();
      await deliver(message.id);
      await deliver(message.id, 2);
      const events = [...store.db.tables.webhookEvents.values()];
      expect(events).toEqual([
        expect.objectContaining({ type: 'message.delivered', subjectOwnerId: alice.id, endpointId: null }),
      ]);
      // The version the store gave the delivery (a failed attempt of another message changed nothing shown).
      expect(JSON.parse(events[0].body).data).toEqual({ id: message.id, status: 'delivered', version: 2 });
      expect((await store.messages.findById(message.id))?.version).toBe(2);
    });

    it('does nothing for a missing or settled message', async () => {
      expect(await deliver(store.messages.nextId())).toBe('missing');
      const message = await queue();
      await deliver(message.id);
      expect(await deliver(message.id, 2)).toBe('settled');
      expect(store.transport.delivered).toHaveLength(1);
    });

    it('a failed attempt stays queued with its error, for the queue to retry', async () => {
      const message = await queue();
      store.transport.failWith = new Error('smtp down');
      const error = await deliver(message.id, 1, false).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DeliveryFailedError);
      expect(error).toMatchObject({ messageId: message.id, attempt: 1, givenUp: false, reason: 'Error: smtp down' });
      expect(stored(message.id)).toMatchObject({ status: 'queued', attempts: 1, lastError: 'Error: smtp down' });
    });

    it('the last failed attempt gives the message up (failed)', async () => {
      const message = await queue();
      store.transport.failWith = new Error('smtp down');
      await expect(deliver(message.id, 3, true)).rejects.toMatchObject({ givenUp: true });
      expect(stored(message.id)).toMatchObject({ status: 'failed', attempts: 3 });
    });

    it('a transport that does not answer in time counts as failed', async () => {
      const message = await queue();
      store.transport.hang = true;
      jest.useFakeTimers();
      try {
        const attempt = deliver(message.id, 1, false, new MessageDeliverySettings(3, 1_000)).catch((e: unknown) => e);
        await jest.advanceTimersByTimeAsync(1_000);
        expect(await attempt).toMatchObject({ reason: expect.stringContaining('timed out after 1000 ms') });
      } finally {
        jest.useRealTimers();
      }
      expect(stored(message.id)?.status).toBe('queued');
    });
  });

  describe('GiveUpMessage', () => {
    it('fails a queued message once; a settled or missing one is left', async () => {
      const message = await queue();
      const giveUp = new GiveUpMessage(store.messages);
      expect(await giveUp.execute(message.id)).toBe(true);
      expect(stored(message.id)?.status).toBe('failed');
      expect(await giveUp.execute(message.id)).toBe(false);
      expect(await giveUp.execute(store.messages.nextId())).toBe(false);
      const delivered = await queue();
      await deliver(delivered.id);
      expect(await giveUp.execute(delivered.id)).toBe(false);
      expect(stored(delivered.id)?.status).toBe('delivered');
    });

    it('queue stats count what waits and what was given up', async () => {
      const oldest = await queue();
      store.clock.advanceMinutes(5);
      await queue();
      await new GiveUpMessage(store.messages).execute(oldest.id);
      expect(await store.messages.queueStats()).toEqual({ queued: 1, oldestQueuedAt: store.clock.now(), failed: 1 });
    });
  });
});
