/**
 * How many attempts this process makes at once to one endpoint (issue 49, item 2): a slow or failing receiver holds at
 * most `perEndpoint` of the worker's slots, and its other deliveries wait their turn outside the worker (DeliverWebhook
 * defers them) instead of taking slots the other endpoints' deliveries need. Per process, in memory: with several
 * worker processes an endpoint gets at most that many from each. Svix and Hookdeck isolate endpoints the same way.
 */
export class WebhookEndpointConcurrency {
  private readonly inFlight = new Map<number, number>();
  /** Each endpoint's recent attempt time (an exponential moving average, ms), for how long to defer. */
  private readonly recentMs = new Map<number, number>();

  constructor(readonly perEndpoint = 4) {}

  /** Takes one of the endpoint's slots; false when all are taken. */
  tryAcquire(endpointId: number): boolean {
    const taken = this.inFlight.get(endpointId) ?? 0;
    if (taken >= this.perEndpoint) return false;
    this.inFlight.set(endpointId, taken + 1);
    return true;
  }

  /** Gives the slot back, with how long the attempt took. */
  release(endpointId: number, tookMs: number): void {
    const taken = (this.inFlight.get(endpointId) ?? 1) - 1;
    if (taken > 0) this.inFlight.set(endpointId, taken);
    else this.inFlight.delete(endpointId);
    const recent = this.recentMs.get(endpointId);
    this.recentMs.set(endpointId, recent === undefined ? tookMs : recent * 0.8 + tookMs * 0.2);
    // Forget endpoints that are quick again, so the map holds only those worth remembering (slow ones).
    if (taken <= 0 && (this.recentMs.get(endpointId) ?? 0) < 50) this.recentMs.delete(endpointId);
  }

  /**
   * How long a delivery that found the endpoint's slots taken waits before its next try: about two of its recent
   * attempts (a slot frees by then), at least 100 ms and at most 10 s, with a tenth of jitter so deferred deliveries
   * do not come back at once.
   */
  deferMs(endpointId: number, random: () => number = Math.random): number {
    const recent = this.recentMs.get(endpointId) ?? 50;
    return Math.round(Math.min(10_000, Math.max(100, 2 * recent)) * (1 + 0.1 * random()));
  }

  /** Attempts in flight to the endpoint (for tests and metrics). */
  attemptsTo(endpointId: number): number {
    return this.inFlight.get(endpointId) ?? 0;
  }
}
