/** The knobs of GradientLimit; only `min` and `max` are configuration (ADMISSION_LIMIT_*), the rest are Gradient2's. */
export interface GradientLimitOptions {
  /** The least limit, and the first: it never throttles fewer concurrent requests than this. */
  min: number;
  /** The most the limit may grow to. */
  max: number;
  /** How much slower than the long-term RTT the short-term one may get before the limit shrinks (Gradient2: 1.5). */
  tolerance?: number;
  /** The share of each new estimate taken into the limit (Gradient2: 0.2). */
  smoothing?: number;
  /** Added to the limit at each sample while latency holds: its growth, and headroom for bursts (Gradient2: 4). */
  headroom?: number;
  /** Samples the long-term RTT averages over (Gradient2: 600). */
  longWindow?: number;
  /** Samples the short-term RTT averages over (a few, against the noise of single requests). */
  shortWindow?: number;
}

/**
 * A concurrency limit that follows measured latency: Netflix concurrency-limits' Gradient2 (Gradient2Limit.java),
 * pure and synchronous (no clock, no timer), so that a test feeds it latencies and reads the limit.
 *
 * Each finished request gives a sample: its round-trip time (from admission to the end of its response) and the
 * requests in flight when it was admitted. Two exponential averages of the RTT are kept: a short one (the last few
 * requests) and a long one (the last several hundred). While the short one stays within `tolerance` of the long one
 * the limit grows by `headroom` a sample (smoothed); when it rises above, the limit shrinks in proportion (the
 * gradient `tolerance × long / short`, at most halving it per sample before smoothing). When load falls, the long
 * average is pulled down towards the short one, so that the next rise is measured against recent latency. One change
 * to Gradient2: the long average rises only while requests do not queue (below), else sustained overload becomes the
 * new normal and the limit climbs back to its maximum (gradient-limit.spec.ts simulates it). While
 * fewer than half the limit are in flight the instance is not what limits throughput (the clients are), so the
 * limit does not move: it cannot grow without evidence, nor shrink from a few slow requests alone.
 *
 * Chosen over AIMD: AIMD needs a "drop" signal (a timeout, a 503 from the database), which comes late and cuts the
 * limit in half at once; the gradient reacts to queueing in the database pool as it starts, and in proportion.
 */
export class GradientLimit {
  private readonly min: number;
  private readonly max: number;
  private readonly tolerance: number;
  private readonly smoothing: number;
  private readonly headroom: number;
  private readonly longFactor: number;
  /** Half the tolerance above 1: below this ratio of short to long RTT nothing queues. */
  private readonly calm: number;
  private readonly shortFactor: number;
  private estimate: number;
  private longRtt = 0;
  private shortRtt = 0;
  private samples = 0;

  constructor(options: GradientLimitOptions) {
    if (!(options.min >= 1 && options.max >= options.min)) throw new Error('GradientLimit: need 1 <= min <= max');
    this.min = options.min;
    this.max = options.max;
    this.tolerance = options.tolerance ?? 1.5;
    this.smoothing = options.smoothing ?? 0.2;
    this.calm = 1 + (this.tolerance - 1) / 2;
    this.headroom = options.headroom ?? 4;
    this.longFactor = 2 / ((options.longWindow ?? 600) + 1);
    this.shortFactor = 2 / ((options.shortWindow ?? 10) + 1);
    this.estimate = options.min;
  }

  /** The requests that may be in flight now: a whole number from `min` to `max`. */
  get limit(): number {
    return Math.floor(this.estimate);
  }

  /** The long-term RTT (ms): what "normal" latency is now (0 before the first sample). */
  get baselineRttMs(): number {
    return this.longRtt;
  }

  /** One finished request: its round-trip time in ms, and the requests in flight as it finished (itself included). */
  onSample(rttMs: number, inFlight: number): void {
    if (!(rttMs >= 0) || !Number.isFinite(rttMs)) return;
    // Floor at 1 µs: a ratio of RTTs must not divide by zero.
    const rtt = Math.max(rttMs, 0.001);
    if (this.samples++ === 0) {
      this.longRtt = rtt;
      this.shortRtt = rtt;
    } else {
      this.shortRtt += (rtt - this.shortRtt) * this.shortFactor;
      // The baseline rises only from samples taken while requests do not queue (the short-term RTT within half the
      // tolerance of it): Gradient2's own average drifts up under sustained overload, until queueing is the new
      // normal and the limit climbs back to its maximum. It falls with every faster sample.
      if (rtt < this.longRtt || this.shortRtt <= this.longRtt * this.calm) {
        this.longRtt += (rtt - this.longRtt) * this.longFactor;
      }
    }
    // Load fell (latency well below the baseline): bring the baseline down faster than its window would.
    if (this.longRtt / this.shortRtt > 2) this.longRtt *= 0.95;
    if (inFlight < this.estimate / 2) return;
    const gradient = Math.max(0.5, Math.min(1, (this.tolerance * this.longRtt) / this.shortRtt));
    const next = this.estimate * gradient + this.headroom;
    const smoothed = this.estimate * (1 - this.smoothing) + next * this.smoothing;
    this.estimate = Math.max(this.min, Math.min(this.max, smoothed));
  }
}
