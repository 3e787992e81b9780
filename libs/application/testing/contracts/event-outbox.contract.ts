import { Order } from '@petstore/domain';
import { UnitOfWork } from '../../src/ports';
import {
  EventLog,
  EventLogQuery,
  EventOutbox,
  EVERY_ACCOUNT,
  FeedPosition,
  OutboxEvent,
  compareFeedPositions,
} from '../../src/events/event.ports';
import { EventConsumers, OnEventRecorded, OutboxEventRecorder, RecordedEvent } from '../../src/events/event-recorder';
import { FixedClock } from '../in-memory/in-memory-database';
import { SummaryEventPayloads } from '../in-memory/in-memory-events';

export interface EventOutboxContractSubject {
  outbox: EventOutbox;
  /** The event log over the same store. */
  log: EventLog;
  uow: UnitOfWork;
  /**
   * Waits until every event committed so far is settled (listed by the feed): at once in memory; on PostgreSQL,
   * until no transaction older than theirs is still in progress (other tests' transactions on the same server).
   */
  settle: () => Promise<void>;
}

const NOW = new Date('2026-01-15T10:00:00.000Z');

/** A consumer of the events, as webhooks are one: keeps what it is handed. */
class KeptEvents {
  readonly events: RecordedEvent[] = [];

  @OnEventRecorded()
  async recorded(event: RecordedEvent): Promise<void> {
    this.events.push(event);
  }
}

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
        version: 1,
      });

    beforeEach(async () => {
      subject = await makeSubject();
      const kept = new KeptEvents();
      consumed = kept.events;
      const consumers = new EventConsumers();
      consumers.register(kept);
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
        data: { id: 11, petId: null, complete: false, version: 1 },
      });
      expect(await subject.outbox.findById(event.id)).toEqual<OutboxEvent>({ ...event });
      const logged = await subject.log.findById(event.id);
      expect(logged).toMatchObject({ id: event.id, type: 'order.placed', subjectOwnerId: 42, body: event.body });
      const page = await subject.log.list({ subjectOwnerId: 42 }, { limit: 10 });
      expect(page.items.map((item) => item.id)).toEqual([event.id]);
    });

    it("lists an account's own events and every account's (the catalogue's), never another's", async () => {
      const stock = { petId: 5, quantity: 3, status: 'available' as const, version: 1 };
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

    describe('the feed, in commit order', () => {
      /** Five events, one transaction each: four of account 42 (two placed, two cancelled), one of 43. */
      async function recordFive(): Promise<string[]> {
        for (const [id, owner, type] of [
          [21, 42, 'order.placed'],
          [22, 42, 'order.cancelled'],
          [23, 43, 'order.placed'],
          [24, 42, 'order.placed'],
          [25, 42, 'order.cancelled'],
        ] as const) {
          await subject.uow.run(() => recorder.record(type, order(id, owner)));
        }
        await subject.settle();
        return consumed.map((event) => event.id);
      }

      it('pages forward from the start, then from each last position, oldest first, until none is left', async () => {
        const ids = await recordFive();
        const seen: string[] = [];
        let after: FeedPosition | undefined;
        let pages = 0;
        for (;;) {
          const page = await subject.log.feed({}, after === undefined ? { limit: 2 } : { limit: 2, after });
          pages++;
          seen.push(...page.items.map((event) => event.id));
          if (page.items.length) after = page.items[page.items.length - 1].position;
          if (!page.hasMore) break;
        }
        expect(seen).toEqual(ids);
        expect(pages).toBe(3);
        // The positions increase, and each event's is the one the newest-first list and findById show once settled.
        const all = (await subject.log.feed({}, { limit: 10 })).items;
        for (let i = 1; i < all.length; i++)
          expect(compareFeedPositions(all[i - 1].position, all[i].position)).toBeLessThan(0);
        expect((await subject.log.findById(all[2].id))?.position).toEqual(all[2].position);
        const newest = (await subject.log.list({}, { limit: 10 })).items;
        expect(newest.map((event) => event.position)).toEqual(all.map((event) => event.position).reverse());
        // Nothing after the last one, yet.
        expect(await subject.log.feed({}, { limit: 2, after: all[4].position })).toEqual({ items: [], hasMore: false });
      });

      it('pages backward before a position, the nearest events, oldest first', async () => {
        const ids = await recordFive();
        const all = (await subject.log.feed({}, { limit: 10 })).items;
        const before = await subject.log.feed({}, { limit: 2, before: all[3].position });
        expect(before.items.map((event) => event.id)).toEqual([ids[1], ids[2]]);
        expect(before.hasMore).toBe(true);
        const first = await subject.log.feed({}, { limit: 2, before: before.items[0].position });
        expect(first).toEqual({ items: [all[0]], hasMore: false });
      });

      it('filters by account and type as the newest-first list does', async () => {
        const ids = await recordFive();
        const of42 = await subject.log.feed({ subjectOwnerId: 42 }, { limit: 10 });
        expect(of42.items.map((event) => event.id)).toEqual([ids[0], ids[1], ids[3], ids[4]]);
        const cancelled = await subject.log.feed({ subjectOwnerId: 42, types: ['order.cancelled'] }, { limit: 1 });
        expect(cancelled.items.map((event) => event.id)).toEqual([ids[1]]);
        expect(cancelled.hasMore).toBe(true);
        const next = await subject.log.feed(
          { subjectOwnerId: 42, types: ['order.cancelled'] },
          { limit: 1, after: cancelled.items[0].position },
        );
        expect(next.items.map((event) => event.id)).toEqual([ids[4]]);
        expect(next.hasMore).toBe(false);
        expect((await subject.log.feed({ subjectOwnerId: 99 }, { limit: 10 })).items).toEqual([]);
      });

      it('keeps the events of one transaction together, between those before and after it', async () => {
        await subject.uow.run(() => recorder.record('order.placed', order(30, 42)));
        // The order of two events of one transaction is not kept: PostgreSQL sends them in one statement.
        await subject.uow.run(async () => {
          await recorder.record('order.placed', order(31, 42));
          await recorder.record('order.cancelled', order(31, 42));
        });
        await subject.uow.run(() => recorder.record('order.completed', order(32, 42)));
        await subject.settle();
        const ids = consumed.map((event) => event.id);
        const page = (await subject.log.feed({}, { limit: 10 })).items.map((event) => event.id);
        expect(page[0]).toBe(ids[0]);
        expect(page.slice(1, 3).sort()).toEqual(ids.slice(1, 3).sort());
        expect(page[3]).toBe(ids[3]);
      });
    });

    it('gives every event a new UUID', () => {
      const ids = new Set([subject.outbox.nextId(), subject.outbox.nextId()]);
      expect(ids.size).toBe(2);
      for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    });
  });
}
