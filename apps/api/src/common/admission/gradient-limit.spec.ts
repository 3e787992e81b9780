import { GradientLimit } from './gradient-limit';

/** Feeds `count` samples of `rttMs`, each with the limit's worth of requests in flight (the instance is busy). */
function feed(limit: GradientLimit, count: number, rttMs: number, inFlight = () => limit.limit): void {
  for (let i = 0; i < count; i++) limit.onSample(rttMs, inFlight());
}

describe('GradientLimit (Gradient2)', () => {
  it('starts at its minimum', () => {
    expect(new GradientLimit({ min: 64, max: 1000 }).limit).toBe(64);
  });

  it('grows while latency stays at its baseline, up to its maximum and no further', () => {
    const limit = new GradientLimit({ min: 10, max: 50 });
    feed(limit, 5, 10);
    const early = limit.limit;
    expect(early).toBeGreaterThan(10);
    feed(limit, 200, 10);
    expect(limit.limit).toBe(50);
  });

  it('shrinks when the short-term latency rises well above the long-term one, down to its minimum', () => {
    const limit = new GradientLimit({ min: 10, max: 200 });
    feed(limit, 300, 10);
    expect(limit.limit).toBe(200);
    feed(limit, 5, 100);
    const shrinking = limit.limit;
    expect(shrinking).toBeLessThan(200);
    feed(limit, 40, 100);
    expect(limit.limit).toBeLessThan(shrinking);
    feed(limit, 300, 1000);
    expect(limit.limit).toBe(10);
  });

  it('tolerates latency up to 1.5 times its baseline without shrinking', () => {
    const limit = new GradientLimit({ min: 10, max: 100 });
    feed(limit, 50, 10);
    const before = limit.limit;
    feed(limit, 20, 14);
    expect(limit.limit).toBeGreaterThanOrEqual(before);
  });

  it('does not move while fewer than half its limit are in flight (the clients are the bound)', () => {
    const limit = new GradientLimit({ min: 40, max: 400 });
    feed(limit, 100, 10, () => 5);
    expect(limit.limit).toBe(40);
    feed(limit, 100, 500, () => 5);
    expect(limit.limit).toBe(40);
  });

  it('recovers once latency falls back: the baseline follows the load down', () => {
    const limit = new GradientLimit({ min: 10, max: 100 });
    feed(limit, 100, 10);
    feed(limit, 200, 200);
    expect(limit.limit).toBe(10);
    feed(limit, 300, 10);
    expect(limit.limit).toBe(100);
  });

  it('settles near the capacity of a saturated server instead of drifting back up to its maximum', () => {
    // A server that serves 20 requests at once in 10 ms: more in flight queue, and each waits its turn.
    const limit = new GradientLimit({ min: 10, max: 200 });
    feed(limit, 300, 10);
    expect(limit.limit).toBe(200);
    const rtt = () => 10 * Math.max(1, limit.limit / 20);
    for (let i = 0; i < 200; i++) limit.onSample(rtt(), limit.limit);
    expect(limit.limit).toBeLessThan(60);
    const settled: number[] = [];
    for (let i = 0; i < 10_000; i++) {
      limit.onSample(rtt(), limit.limit);
      if (i % 1000 === 999) settled.push(limit.limit);
    }
    // Within the tolerance (1.5 times the unloaded latency, plus the headroom), and not creeping up.
    for (const value of settled) expect(value).toBeLessThanOrEqual(40);
    expect(Math.max(...settled) - Math.min(...settled)).toBeLessThanOrEqual(2);
  });

  it('stays within min and max whatever it is fed, and ignores samples that are not times', () => {
    const limit = new GradientLimit({ min: 3, max: 7 });
    const rtts = [0, 1, 1e6, 5, 0.0001, NaN, -1, Infinity, 30, 2, 500];
    for (let i = 0; i < 1000; i++) {
      limit.onSample(rtts[i % rtts.length], (i * 7) % 10);
      expect(limit.limit).toBeGreaterThanOrEqual(3);
      expect(limit.limit).toBeLessThanOrEqual(7);
      expect(Number.isInteger(limit.limit)).toBe(true);
    }
  });

  it('min = max is a fixed limit', () => {
    const limit = new GradientLimit({ min: 2, max: 2 });
    feed(limit, 50, 10);
    feed(limit, 50, 1000);
    expect(limit.limit).toBe(2);
  });

  it('refuses min above max', () => {
    expect(() => new GradientLimit({ min: 5, max: 4 })).toThrow();
  });
});
