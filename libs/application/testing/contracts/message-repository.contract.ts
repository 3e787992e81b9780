import { Message } from '@petstore/domain';
import { MessageRepository } from '../../src/message/message.repository';
import { ConstraintViolationError, UnitOfWork } from '../../src/ports';

export interface MessageContractSubject {
  messages: MessageRepository;
  uow: UnitOfWork;
  /** An account that may own messages (a row in the real store), by id. */
  newAccountId(): Promise<number>;
}

const NOW = new Date('2026-01-15T10:00:00.000Z');

/**
 * The behaviour of a MessageRepository the message use cases rely on, run against the in-memory fake
 * and the PostgreSQL repository. `makeRepo` gives a fresh, empty store each test.
 */
export function describeMessageRepositoryContract(name: string, makeRepo: () => Promise<MessageContractSubject>): void {
  describe(`MessageRepository contract: ${name}`, () => {
    let subject: MessageContractSubject;
    let messages: MessageRepository;
    let ownerId: number;
    let minutes = 0;
    const queue = async (text: string) => {
      const message = Message.queue({
        id: messages.nextId(),
        text,
        ownerId,
        now: new Date(NOW.getTime() + ++minutes * 60_000),
      });
      await messages.add(message);
      return message;
    };

    beforeEach(async () => {
      subject = await makeRepo();
      messages = subject.messages;
      ownerId = await subject.newAccountId();
    });

    it('gives new UUIDs; stores a queued message and reads it back', async () => {
      expect(messages.nextId()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(messages.nextId()).not.toBe(messages.nextId());
      const message = await queue('Hello');
      expect((await messages.findById(message.id))?.toSnapshot()).toEqual(message.toSnapshot());
      expect(await messages.findById(messages.nextId())).toBeNull();
    });

    it('refuses a message of an unknown owner (foreign key)', async () => {
      const message = Message.queue({ id: messages.nextId(), text: 'Hi', ownerId: ownerId + 1000, now: NOW });
      await expect(messages.add(message)).rejects.toBeInstanceOf(ConstraintViolationError);
      await expect(messages.add(message)).rejects.toMatchObject({ constraintKind: 'foreign_key' });
      expect(await messages.findById(message.id)).toBeNull();
    });

    it('lists oldest first by status, a keyset page at a time (the cursor is not the id)', async () => {
      const a = await queue('a');
      const b = await queue('b');
      const c = await queue('c');
      b.deliver(NOW);
      await messages.recordAttempt(b, { attempts: 1, error: null });
      const first = await messages.list({}, { limit: 2 });
      expect(first.items.map((m) => m.id)).toEqual([a.id, b.id]);
      expect(first.nextAfterId).toEqual(expect.any(Number));
      const rest = await messages.list({}, { limit: 2, afterId: first.nextAfterId as number });
      expect(rest).toEqual({ items: [expect.objectContaining({ id: c.id })], nextAfterId: null });
      expect((await messages.list({ status: 'queued' }, { limit: 10 })).items.map((m) => m.id)).toEqual([a.id, c.id]);
      expect((await messages.list({ status: 'delivered' }, { limit: 10 })).items.map((m) => m.id)).toEqual([b.id]);
    });

    it('records an attempt only while the message is queued', async () => {
      const message = await queue('Hi');
      expect(await messages.recordAttempt(message, { attempts: 1, error: 'Error: down' })).toBe(true);
      // A failed attempt changes nothing the API shows: the version stays.
      expect((await messages.findById(message.id))?.toSnapshot()).toMatchObject({ status: 'queued', version: 1 });
      message.deliver(NOW);
      expect(await messages.recordAttempt(message, { attempts: 2, error: null })).toBe(true);
      expect((await messages.findById(message.id))?.toSnapshot()).toMatchObject({
        status: 'delivered',
        deliveredAt: NOW,
        version: 2,
      });
      const late = Message.restore({ ...message.toSnapshot(), status: 'queued', deliveredAt: null });
      late.giveUp();
      expect(await messages.recordAttempt(late, { attempts: 3, error: null })).toBe(false);
      expect((await messages.findById(message.id))?.status).toBe('delivered');
    });

    it('counts queued and failed messages, and when the oldest queued one was queued', async () => {
      expect(await messages.queueStats()).toEqual({ queued: 0, oldestQueuedAt: null, failed: 0 });
      const failed = await queue('x');
      const oldest = await queue('y');
      await queue('z');
      failed.giveUp();
      await messages.recordAttempt(failed, { attempts: 10, error: 'Error: gone' });
      expect(await messages.queueStats()).toEqual({ queued: 2, oldestQueuedAt: oldest.createdAt, failed: 1 });
    });

    it('rolls back a failed unit of work: the message is not stored', async () => {
      let id = '';
      await expect(
        subject.uow.run(async () => {
          id = (await queue('lost')).id;
          throw new Error('the command failed');
        }),
      ).rejects.toThrow('the command failed');
      expect(await messages.findById(id)).toBeNull();
    });
  });
}
