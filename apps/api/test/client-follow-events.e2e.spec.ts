import { createPetstoreClient } from '@petstore/client';
import { StoreFixtures } from './support/store-fixtures';
import { TestApp } from './support/test-app';

/**
 * Issue 49: the typed client's `followEvents()` against the real service (real PostgreSQL): it reads the commit-order
 * feed from its start, and at its end polls with `If-None-Match` the tag of an empty page, which the service answers
 * 304 while nothing came, at any position (a page's tag is made from what it sends); a new event then comes in a 200.
 * No timing is asserted: the writes happen in the follower's waits (its injected `sleep`).
 */
describe("the client's followEvents() on the real feed", () => {
  let api: TestApp;
  let store: StoreFixtures;

  beforeAll(async () => {
    api = await TestApp.start();
    store = await StoreFixtures.on(api);
  });
  afterAll(async () => {
    await store?.close();
    await api?.close();
  });

  it('yields each order placed, in order, and polls the end of the feed with free 304s, before and after', async () => {
    const { key } = await api.customer('Follower');
    const petId = await store.pet({ quantity: 10 });
    const first = await store.placed(key, petId);
    const asked: { url: URL; tag: string | null; status: number }[] = [];
    const stop = new AbortController();
    let second: number | undefined;
    const orders: number[] = [];
    const positions: string[] = [];
    const client = createPetstoreClient({
      baseUrl: api.baseUrl,
      apiKey: key,
      fetch: async (request) => {
        const response = await fetch(request);
        asked.push({ url: new URL(request.url), tag: request.headers.get('if-none-match'), status: response.status });
        return response;
      },
      sleep: async () => {
        const free = asked.filter(({ status }) => status === 304).length;
        // One 304 at the end: a second order. Then, once it came and a 304 after it, stop.
        if (free >= 1 && second === undefined) second = await store.placed(key, petId);
        else if (orders.length === 2 && asked.at(-1)?.status === 304) stop.abort();
        await new Promise((resolve) => setTimeout(resolve, 20)); // a settling write: ask again in a moment
      },
    });
    for await (const event of client.followEvents({ type: ['order.placed'], signal: stop.signal })) {
      if (event.type === 'order.placed') orders.push(event.data.id);
      positions.push(event.position);
    }
    expect(orders).toEqual([first, second]);
    const [afterFirst, afterSecond] = positions;
    const at = (position: string | undefined) =>
      asked.filter(({ url }) => url.searchParams.get('startingAfter') === position);
    // From the start of the feed, then after each event; the end's tag sent once an empty page gave it.
    expect(asked[0].url.searchParams.get('order')).toBe('commit');
    const endTag = at(afterFirst).find(({ status, tag }) => status === 200 && tag === null);
    expect(endTag).toBeDefined();
    expect(at(afterFirst).some(({ status, tag }) => status === 304 && tag !== null)).toBe(true);
    // After the second order, a position never asked before: the empty page's tag still earns a 304.
    const latest = at(afterSecond);
    expect(latest.length).toBeGreaterThan(0);
    expect(latest.every(({ status, tag }) => status === 304 && tag !== null)).toBe(true);
  });
});
