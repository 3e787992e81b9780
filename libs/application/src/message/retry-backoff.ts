export interface RetryBackoffOptions {
  /** Delay after the first failed attempt. */
  baseMs: number;
  /** No delay exceeds this (the cap). */
  maxMs: number;
  /**
   * Up to this fraction of a delay is taken off at random (0 … 1), so that messages that failed
   * together do not all come back at the same instant. 0 = exact delays.
   */
  jitter: number;
}

export const DEFAULT_RETRY_BACKOFF: RetryBackoffOptions = { baseMs: 1_000, maxMs: 5 * 60_000, jitter: 0.2 };

/**
 * Exponential back-off with a cap for failed deliveries: after the n-th failed attempt the
 * message waits `min(maxMs, baseMs · 2^(n−1))`, less a random share of at most `jitter`.
 * A message is retried for as long as it takes: none is ever given up (none is lost).
 */
export class RetryBackoff {
  readonly options: RetryBackoffOptions;

  constructor(
    options: Partial<RetryBackoffOptions> = {},
    private readonly random: () => number = Math.random,
  ) {
    const merged = { ...DEFAULT_RETRY_BACKOFF, ...options };
    if (!(merged.baseMs > 0) || !(merged.maxMs >= merged.baseMs) || !(merged.jitter >= 0 && merged.jitter <= 1)) {
      throw new RangeError('RetryBackoff needs 0 < baseMs <= maxMs and 0 <= jitter <= 1.');
    }
    this.options = merged;
  }

  /** Milliseconds to wait after `failedAttempts` (≥ 1) attempts have failed. */
  delayMs(failedAttempts: number): number {
    const { baseMs, maxMs, jitter } = this.options;
    const n = Math.max(1, Math.floor(failedAttempts));
    // 2^(n−1) overflows to Infinity for large n; the cap applies first, so that is harmless.
    const exact = Math.min(maxMs, baseMs * 2 ** (n - 1));
    return Math.round(exact * (1 - jitter * this.random()));
  }

  /** When the next attempt is due, given the time of the failure. */
  nextAttemptAt(failedAttempts: number, failedAt: Date): Date {
    return new Date(failedAt.getTime() + this.delayMs(failedAttempts));
  }
}
