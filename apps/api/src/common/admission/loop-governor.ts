/**
 * The event loop's share of admission: a cap on the requests in flight that holds the instance's one thread below
 * saturation while it is refusing or queueing, pure and synchronous (no clock, no timer: Admission feeds it a window
 * at a time), so that a test feeds it windows and reads the cap.
 *
 * Why a second limit beside the latency gradient (GradientLimit): the gradient sees the time from admission to the
 * end of a response, which is where a slow database shows. It does not see the time a request spends in the kernel
 * before the thread gets to read it, which is where a saturated thread shows: offered twice its capacity over many
 * connections, the thread serves what the limit admits, answers the rest 503, and the two together take more than
 * the thread has; every pass of the event loop then handles more requests than the last, and everything waits,
 * the refusals and the liveness probes included. The benchmark's overload scenario measured the gradient at its floor
 * (64) with the loop's delay at up to 70-155 ms (p99 within a second). Here, while requests are refused or queued
 * (demand is above the limit: the gradient's job is done), a window in which the thread is saturated (busy 90 % of it
 * or more) and the loop's delay exceeds its target cuts the cap below what was in flight, by a tenth to a half as far
 * as the delay is over: fewer admitted requests (about 160-300 µs of the thread each), more refusals (about 40 µs),
 * until the loop keeps up. A quiet window (delay under half the target, the thread busy under 85 %, or nothing
 * refused or queued) gives a tenth back, and the cap lifts once it reaches the gradient's limit. Both conditions to
 * cut: the delay alone also rises with timer jitter and one long task (a 5 ms target, on delay alone, cut the cap to
 * 1 with the thread two-thirds busy: measured), and utilisation alone is also 100 % at capacity without overload,
 * when a cut would only turn requests away.
 *
 * Not floored by ADMISSION_LIMIT_MIN, which exists for the database's latency spikes (a vacuum, a failover): at normal
 * load the loop keeps up and nothing queues, so the cap never forms; it forms only while the instance refuses anyway.
 */
export class LoopGovernor {
  private capValue = Infinity;

  /** `targetMs`: the loop delay (ms, per window) above which the cap shrinks; 0 turns the governor off. */
  constructor(private readonly targetMs: number) {}

  /** The most requests in flight the thread allows now (Infinity: no cap). */
  get cap(): number {
    return this.capValue;
  }

  /**
   * One window: the loop's delay in it (ms), the share of it the thread was busy (event-loop utilisation, 0-1),
   * whether a request was refused or queued in it, the requests in flight at its end, and the gradient's limit now
   * (the cap lifts when it grows back to it).
   */
  onWindow(delayMs: number, busy: number, pressed: boolean, inFlight: number, limit: number): void {
    if (this.targetMs <= 0) return;
    if (pressed && delayMs > this.targetMs && busy >= 0.9) {
      // In proportion to how far the delay is over its target, from a tenth to a half per window: the load's first
      // second, from the gradient's floor, took 13 windows at a tenth each, and held that second's p99 at 130-270 ms.
      const factor = Math.max(0.5, Math.min(0.9, this.targetMs / delayMs));
      this.capValue = Math.max(1, Math.floor(Math.min(this.capValue, limit, Math.max(inFlight, 1)) * factor));
    } else if (this.capValue !== Infinity && (!pressed || delayMs <= this.targetMs / 2 || busy < 0.85)) {
      this.capValue = Math.ceil(this.capValue * 1.1) + 1;
      if (this.capValue >= limit) this.capValue = Infinity;
    }
  }
}
