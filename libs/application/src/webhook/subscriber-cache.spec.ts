import type { WebhookEventType } from '@petstore/domain';
import { FixedClock } from '../../testing/in-memory/in-memory-database';
import {
  EndpointChangeSubscriber,
  SubscriberCache,
  SubscriberCacheSettings,
  WebhookEndpointChanges,
} from './subscriber-cache';
import { WebhookEndpointRepository } from './webhook.ports';

/** The signal as one instance sees it: `deliver` is an announcement arriving, `disconnect`/`reconnect` reset. */
class FakeChanges extends WebhookEndpointChanges {
  private readonly subscribers: EndpointChangeSubscriber[] = [];
  connected = true;
  announced = 0;

  get listening(): boolean {
    return this.connected;
  }
  async announce(): Promise<void> {
    this.announced++;
  }
  subscribe(subscriber: EndpointChangeSubscriber): void {
    this.subscribers.push(subscriber);
  }
  deliver(): void {
    for (const subscriber of this.subscribers) subscriber.changed();
  }
  disconnect(): void {
    this.connected = false;
    for (const subscriber of this.subscribers) subscriber.reset();
  }
}

/** hasSubscribers answers `answer`, counting calls; `gate` (when set) holds the answer until released. */
function fakeEndpoints() {
  const port = {
    answer: false,
    calls: [] as [WebhookEventType, number | null][],
    gate: null as Promise<void> | null,
    async hasSubscribers(type: WebhookEventType, subjectOwnerId: number | null): Promise<boolean> {
      port.calls.push([type, subjectOwnerId]);
      const answer = port.answer; // read when asked, as a statement would
      if (port.gate) await port.gate;
      return answer;
    },
  };
  return port;
}

describe('SubscriberCache', () => {
  let clock: FixedClock;
  let changes: FakeChanges;
  let endpoints: ReturnType<typeof fakeEndpoints>;
  let cache: SubscriberCache;
  beforeEach(() => {
    clock = new FixedClock();
    changes = new FakeChanges();
    endpoints = fakeEndpoints();
    const port = endpoints as unknown as WebhookEndpointRepository;
    cache = new SubscriberCache(port, changes, clock, new SubscriberCacheSettings(5, 3));
  });

  it('answers a repeated question from memory, per event type and subject owner', async () => {
    expect(await cache.hasSubscribers('order.placed', 7)).toBe(false);
    endpoints.answer = true; // not announced: the cached answer stands
    expect(await cache.hasSubscribers('order.placed', 7)).toBe(false);
    expect(endpoints.calls).toHaveLength(1);
    expect(await cache.hasSubscribers('order.placed', 8)).toBe(true);
    expect(await cache.hasSubscribers('order.cancelled', 7)).toBe(true);
    expect(await cache.hasSubscribers('pet.status_changed', null)).toBe(true);
    expect(await cache.hasSubscribers('pet.status_changed', null)).toBe(true);
    expect(endpoints.calls).toHaveLength(4);
  });

  it('forgets every answer when a change is announced (or made here)', async () => {
    await cache.hasSubscribers('order.placed', 7);
    await cache.hasSubscribers('order.placed', 8);
    endpoints.answer = true;
    changes.deliver();
    expect(cache.size).toBe(0);
    expect(await cache.hasSubscribers('order.placed', 7)).toBe(true);
    endpoints.answer = false;
    cache.changed();
    expect(await cache.hasSubscribers('order.placed', 7)).toBe(false);
    expect(endpoints.calls).toHaveLength(4);
  });

  it('keeps an answer for the TTL only (the clock)', async () => {
    await cache.hasSubscribers('order.placed', 7);
    clock.set(new Date(clock.now().getTime() + 4_999));
    await cache.hasSubscribers('order.placed', 7);
    expect(endpoints.calls).toHaveLength(1);
    clock.set(new Date(clock.now().getTime() + 1));
    await cache.hasSubscribers('order.placed', 7);
    expect(endpoints.calls).toHaveLength(2);
  });

  it('holds at most maxEntries answers, dropping the oldest', async () => {
    for (const owner of [1, 2, 3, 4]) await cache.hasSubscribers('order.placed', owner);
    expect(cache.size).toBe(3);
    await cache.hasSubscribers('order.placed', 4);
    await cache.hasSubscribers('order.placed', 2);
    expect(endpoints.calls).toHaveLength(4);
    await cache.hasSubscribers('order.placed', 1); // the oldest, dropped
    expect(endpoints.calls).toHaveLength(5);
    expect(cache.size).toBe(3);
  });

  it('does not keep an answer read before a change that arrived during the lookup', async () => {
    let release!: () => void;
    endpoints.gate = new Promise((resolve) => (release = resolve));
    const stale = cache.hasSubscribers('order.placed', 7); // reads "none"
    endpoints.answer = true; // an endpoint is created and committed...
    changes.deliver(); // ...and announced before the lookup returns
    release();
    expect(await stale).toBe(false);
    endpoints.gate = null;
    expect(await cache.hasSubscribers('order.placed', 7)).toBe(true);
    expect(endpoints.calls).toHaveLength(2);
  });

  it('caches nothing while changes are not received', async () => {
    changes.disconnect();
    await cache.hasSubscribers('order.placed', 7);
    await cache.hasSubscribers('order.placed', 7);
    expect(endpoints.calls).toHaveLength(2);
    expect(cache.size).toBe(0);
  });

  it('forgets everything when the signal is lost', async () => {
    await cache.hasSubscribers('order.placed', 7);
    changes.disconnect();
    changes.connected = true;
    await cache.hasSubscribers('order.placed', 7);
    expect(endpoints.calls).toHaveLength(2);
  });
});
