import { Order } from '@petstore/domain';
import { UnitOfWork } from '../../src/ports';
import { EventLog, EventLogQuery, EventOutbox, EVERY_ACCOUNT, OutboxEvent } from '../../src/events/event.ports';
import { EventConsumers, OutboxEventRecorder, RecordedEvent } from '../../src/events/event-recorder';
import { FixedClock } from '../in-memory/in-memory-database';
import { SummaryEventPayloads } from '../in-memory/in-memory-events';

export interface EventOutboxContractSubject {
  outbox: EventOutbox;
  /** The event log over the same store. */
  log: EventLog;
  uow: UnitOfWork;
}

const NOW = new Date('2026-01-15T10:00:00.000Z');

/**
 * What the use cases rely on when they record a fact (EventRecorder, the outbox under it), run against the in-memory
 * fake and the PostgreSQL adapter: the event commits with the change or not at all, and is logged as recorded.
 * `makeSubject` gives a fresh, empty store each test.
 */
export function describeEventOutboxContract(name: string, makeSubject: () => Promise<EventOutboxContractSubject>) {
  describe(`Event outbox contract: ${name}`, () => {
    let subject: EventOutboxContractSubject;
    let consumed: RecordedEvent[];
    let recorder: OutboxEventRecorder;
    const order = (id: number, ownerId: number) =>
      Order.restore({
        id,
        petId: null,
        quantity: 1,
        shipDate: null,
        status: 'placed',
        createdAt: NOW,
        statusChangedAt: NOW,
        ownerId,
      });

    beforeEach(async () => {
      subject = await makeSubject();
      consumed = [];
      const consumers = new EventConsumers();
      consumers.subscribe({ recorded: async (event) => void consumed.push(event) });
      recorder = new OutboxEventRecorder(subject.outbox, new SummaryEventPayloads(), new FixedClock(NOW), consumers);
    });

    it('records a fact with its subject owner and body; the log and the outbox read it back', async () => {
      await subject.uow.run(() => recorder.record('order.placed', order(11, 42)));
      expect(consumed).toHaveLength(1);
      const [event] = consumed;
      expect(event).toMatchObject({ type: 'order.placed', subjectOwnerId: 42, endpointId: null, createdAt: NOW });
      expect(JSON.parse(event.body)).toEqual({
        type: 'order.placed',
        timestamp: NOW.toISOString(),
        data: { id: 11, petId: null, complete: false },
      });
      expect(await subject.outbox.findById(event.id)).toEqual<OutboxEvent>({ ...event });
      const logged = await subject.log.findById(event.id);
      expect(logged).toMatchObject({ id: event.id, type: 'order.placed', subjectOwnerId: 42, body: event.body });
      const page = await subject.log.list({ subjectOwnerId: 42 }, { limit: 10 });
      expect(page.items.map((item) => item.id)).toEqual([event.id]);
    });

    it("lists an account's own events and every account's (the catalogue's), never another's", async () => {
      const stock = { petId: 5, quantity: 3, status: 'available' as const };
      await subject.uow.run(async () => {
        await recorder.record('order.placed', order(21, 42));
        await recorder.record('order.placed', order(22, 43));
      });
      await subject.uow.run(() => recorder.record('inventory.changed', stock));
      const [, , catalogue] = consumed;
      expect(catalogue).toMatchObject({ type: 'inventory.changed', subjectOwnerId: EVERY_ACCOUNT });
      const seen = async (query: EventLogQuery) =>
        (await subject.log.list(query, { limit: 10 })).items.map((item) => item.type);
      expect(await seen({ subjectOwnerId: 42 })).toEqual(['inventory.changed', 'order.placed']);
      expect(await seen({ subjectOwnerId: 42, types: ['order.placed'] })).toEqual(['order.placed']);
      expect(await seen({ subjectOwnerId: 44 })).toEqual(['inventory.changed']);
      expect(await seen({})).toEqual(['inventory.changed', 'order.placed', 'order.placed']);
    });

    it('a change that rolls back leaves no event', async () => {
      const failed = subject.uow.run(async () => {
        await recorder.record('order.cancelled', order(12, 43));
        throw new Error('the change fails');
      });
      await expect(failed).rejects.toThrow('the change fails');
      expect(consumed).toHaveLength(1);
      expect(await subject.outbox.findById(consumed[0].id)).toBeNull();
      expect((await subject.log.list({}, { limit: 10 })).items).toEqual([]);
    });

    it('refuses an event outside a transaction (it must commit with its change)', async () => {
      await expect(recorder.record('order.placed', order(13, 44))).rejects.toThrow();
      expect((await subject.log.list({}, { limit: 10 })).items).toEqual([]);
    });

    it('gives every event a new UUID', () => {
      const ids = new Set([subject.outbox.nextId(), subject.outbox.nextId()]);
      expect(ids.size).toBe(2);
      for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    });
  });
}
