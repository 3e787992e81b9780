import { WebhookEndpointConcurrency } from './endpoint-concurrency';

describe('WebhookEndpointConcurrency', () => {
  it('gives each endpoint its own slots, and takes them back', () => {
    const slots = new WebhookEndpointConcurrency(2);
    expect([slots.tryAcquire(1), slots.tryAcquire(1), slots.tryAcquire(1)]).toEqual([true, true, false]);
    expect(slots.tryAcquire(2)).toBe(true); // another endpoint is not affected
    slots.release(1, 10);
    expect(slots.attemptsTo(1)).toBe(1);
    expect(slots.tryAcquire(1)).toBe(true);
  });

  it("defers by about two of the endpoint's recent attempts, within 100 ms and 10 s", () => {
    const slots = new WebhookEndpointConcurrency(1);
    const none = () => 0;
    expect(slots.deferMs(7, none)).toBe(100); // unknown, or quick: the least
    slots.tryAcquire(7);
    slots.release(7, 2_000);
    expect(slots.deferMs(7, none)).toBe(4_000);
    slots.tryAcquire(7);
    slots.release(7, 60_000); // a receiver that times out
    expect(slots.deferMs(7, none)).toBe(10_000);
    expect(slots.deferMs(7, () => 1)).toBe(11_000); // a tenth of jitter at most
  });
});
