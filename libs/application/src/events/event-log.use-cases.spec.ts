import { Account } from '@petstore/domain';
import { anAccount, anOrder, inMemoryPetstore, InMemoryPetstore } from '../../testing';
import { EventNotFoundError, EventQueries, PurgeEvents } from './event-log.use-cases';
import { EventRetention } from './event.ports';

describe('event log use cases (in-memory ports, events recorded as the use cases record them)', () => {
  let store: InMemoryPetstore & { eventQueries: EventQueries; purge: PurgeEvents };
  let ada: Account;
  let bob: Account;
  let admin: Account;
  beforeEach(async () => {
    const petstore = inMemoryPetstore();
    store = {
      ...petstore,
      eventQueries: new EventQueries(petstore.eventLog),
      // Batches of 2 events, at most 10 a run.
      purge: new PurgeEvents(petstore.uow, petstore.eventLog, new EventRetention(30, 2, 10), petstore.clock),
    };
    ada = await anAccount().customer().saveIn(store);
    bob = await anAccount().customer().saveIn(store);
    admin = await anAccount().admin().saveIn(store);
  });

  it("shows a customer its own events only, an administrator every event (pets' included)", async () => {
    await store.uow.run(() => store.events.record('order.placed', anOrder().ownedBy(ada.id).build()));
    await store.uow.run(() => store.events.record('order.cancelled', anOrder().ownedBy(bob.id).build()));
    const pet = { id: 1, status: 'sold' } as never;
    await store.uow.run(() => store.events.record('pet.status_changed', pet));
    const types = async (viewer: Account) =>
      (await store.eventQueries.list(viewer, {}, { limit: 10 })).items.map((e) => e.type);
    expect(await types(ada)).toEqual(['order.placed']);
    expect(await types(bob)).toEqual(['order.cancelled']);
    expect(await types(admin)).toEqual(['pet.status_changed', 'order.cancelled', 'order.placed']);
    const [petEvent, bobsEvent] = (await store.eventQueries.list(admin, {}, { limit: 10 })).items;
    expect(await store.eventQueries.get(bobsEvent.id, bob)).toMatchObject({ id: bobsEvent.id });
    expect(await store.eventQueries.get(petEvent.id, admin)).toMatchObject({ id: petEvent.id });
    await expect(store.eventQueries.get(bobsEvent.id, ada)).rejects.toBeInstanceOf(EventNotFoundError);
    await expect(store.eventQueries.get(petEvent.id, bob)).rejects.toBeInstanceOf(EventNotFoundError);
    // A customer's filter cannot widen what it sees.
    const filtered = await store.eventQueries.list(ada, { types: ['order.cancelled'] }, { limit: 10 });
    expect(filtered.items).toEqual([]);
  });

  it('purges the events older than the retention period in bounded batches, until none is left', async () => {
    for (let i = 0; i < 5; i++) {
      await store.uow.run(() => store.events.record('order.placed', anOrder().ownedBy(ada.id).build()));
    }
    store.clock.advanceMinutes(29 * 24 * 60);
    await store.uow.run(() => store.events.record('order.completed', anOrder().ownedBy(ada.id).build()));
    expect(await store.purge.execute()).toEqual({ purged: 0 });
    store.clock.advanceMinutes(24 * 60 + 1);
    expect(await store.purge.execute()).toEqual({ purged: 5 }); // batches of 2: 2, 2, 1
    const left = (await store.eventQueries.list(admin, {}, { limit: 10 })).items.map((e) => e.type);
    expect(left).toEqual(['order.completed']);
  });

  it('rests after each full batch for its share of the time the batch took, and not after the last', async () => {
    for (let i = 0; i < 5; i++) {
      await store.uow.run(() => store.events.record('order.placed', anOrder().ownedBy(ada.id).build()));
    }
    store.clock.advanceMinutes(31 * 24 * 60);
    // Each batch takes 40 ms of the clock's time; the purge rests half of it (20 ms) before the next.
    const batches: number[] = [];
    const log = store.eventLog;
    const timed = Object.assign(Object.create(log) as typeof log, {
      purgeBatch: async (before: Date, limit: number) => {
        batches.push(Date.now());
        store.clock.set(new Date(store.clock.now().getTime() + 40));
        return log.purgeBatch(before, limit);
      },
    });
    const purge = new PurgeEvents(store.uow, timed, new EventRetention(30, 2, 10, 0.5), store.clock);
    jest.useFakeTimers({ now: 0 });
    try {
      const run = purge.execute();
      await jest.advanceTimersByTimeAsync(0);
      expect(batches).toEqual([0]); // resting: the second batch waits 20 ms
      await jest.advanceTimersByTimeAsync(19);
      expect(batches).toEqual([0]);
      await jest.advanceTimersByTimeAsync(1);
      expect(batches).toEqual([0, 20]);
      await jest.advanceTimersByTimeAsync(20);
      expect(batches).toEqual([0, 20, 40]);
      expect(await run).toEqual({ purged: 5 }); // 2, 2, then 1: the last, no rest after it
      expect(jest.getTimerCount()).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });
});
