import { DEFAULT_RETRY_BACKOFF, RetryBackoff } from './retry-backoff';

describe('RetryBackoff', () => {
  const exact = new RetryBackoff({ baseMs: 1_000, maxMs: 60_000, jitter: 0 });

  it('doubles the delay after each failed attempt, starting at baseMs', () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => exact.delayMs(n))).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000]);
  });

  it('never waits longer than maxMs, however many attempts failed', () => {
    expect(exact.delayMs(7)).toBe(60_000); // 64 s capped
    expect(exact.delayMs(50)).toBe(60_000);
    expect(exact.delayMs(5_000)).toBe(60_000); // 2^4999 is Infinity before the cap
  });

  it('treats 0 or a fraction of attempts as the first', () => {
    expect(exact.delayMs(0)).toBe(1_000);
    expect(exact.delayMs(2.7)).toBe(2_000);
  });

  it('takes at most the jitter share off, never adds', () => {
    const lowest = new RetryBackoff({ baseMs: 1_000, maxMs: 60_000, jitter: 0.25 }, () => 0.999_999);
    const highest = new RetryBackoff({ baseMs: 1_000, maxMs: 60_000, jitter: 0.25 }, () => 0);
    const half = new RetryBackoff({ baseMs: 1_000, maxMs: 60_000, jitter: 0.25 }, () => 0.5);
    expect(lowest.delayMs(3)).toBe(3_000);
    expect(highest.delayMs(3)).toBe(4_000);
    expect(half.delayMs(3)).toBe(3_500);
    expect(lowest.delayMs(20)).toBe(45_000); // the cap, less its jitter
  });

  it('stays within [ (1 − jitter) · exact, exact ] with a real random source', () => {
    const backoff = new RetryBackoff({ baseMs: 500, maxMs: 10_000, jitter: 0.2 });
    for (let n = 1; n <= 12; n++) {
      const exactDelay = Math.min(10_000, 500 * 2 ** (n - 1));
      for (let i = 0; i < 50; i++) {
        const delay = backoff.delayMs(n);
        expect(delay).toBeGreaterThanOrEqual(Math.floor(exactDelay * 0.8));
        expect(delay).toBeLessThanOrEqual(exactDelay);
      }
    }
  });

  it('dates the next attempt from the failure', () => {
    const failedAt = new Date('2030-01-01T00:00:00.000Z');
    expect(exact.nextAttemptAt(3, failedAt)).toEqual(new Date('2030-01-01T00:00:04.000Z'));
  });

  it('defaults to 1 s doubling up to 5 minutes, with 20 % jitter', () => {
    expect(new RetryBackoff().options).toEqual(DEFAULT_RETRY_BACKOFF);
    expect(DEFAULT_RETRY_BACKOFF).toEqual({ baseMs: 1_000, maxMs: 300_000, jitter: 0.2 });
  });

  it.each([
    [{ baseMs: 0 }],
    [{ baseMs: -1 }],
    [{ baseMs: 2_000, maxMs: 1_000 }],
    [{ jitter: 1.5 }],
    [{ jitter: -0.1 }],
    [{ baseMs: Number.NaN }],
  ])('refuses the options %p', (options) => {
    expect(() => new RetryBackoff(options)).toThrow(RangeError);
  });
});
