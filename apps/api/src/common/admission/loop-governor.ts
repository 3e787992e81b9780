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
 *
 * **Its own load only** (issue 48). A noisy neighbour on the same core (a busy process, a container's CPU quota, a
 * VM's steal) raises both signals without any request of the instance's own: the loop's delay grows while the
 * thread waits for the core, and utilisation counts that wait as busy when it falls inside a callback. Cut on them
 * alone and the instance refused 45 % of half the capacity it had under that noise. Two conditions make the signals
 * the instance's own: **pressure**, the share of the window's arrivals that could not be admitted at once (refused or
 * queued: the instance's own demand over its own limit, not one burst after a descheduling), at least
 * `MIN_PRESSURE`; and **its own CPU**, the process's CPU time over the window, at least `OWN_CPU` of the time the loop
 * was busy (a thread that had the core for its busy time was busy with its own work; one that had it for half of it
 * was waiting for a neighbour, and fewer requests in flight would not shorten that wait). Without them the cap gives
 * a tenth back, as in a quiet window; the latency gradient and the queue still shed real overload under noise.
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
   * One window: the loop's delay in it (ms), the share of it the thread was busy (event-loop utilisation, 0-1), the
   * share of its arrivals refused or queued (0-1; 1 when a request waited and none arrived), the requests in flight
   * at its end, the gradient's limit now (the cap lifts when it grows back to it), and the process's CPU time over the
   * window's (0-1, more with helper threads; default: as busy as the loop, no neighbour).
   */
  onWindow(delayMs: number, busy: number, pressure: number, inFlight: number, limit: number, cpu = busy): void {
    if (this.targetMs <= 0) return;
    const ownLoad = pressure >= MIN_PRESSURE && cpu >= busy * OWN_CPU;
    if (ownLoad && delayMs > this.targetMs && busy >= 0.9) {
      // In proportion to how far the delay is over its target, from a tenth to a half per window: the load's first
      // second, from the gradient's floor, took 13 windows at a tenth each, and held that second's p99 at 130-270 ms.
      const factor = Math.max(0.5, Math.min(0.9, this.targetMs / delayMs));
      this.capValue = Math.max(1, Math.floor(Math.min(this.capValue, limit, Math.max(inFlight, 1)) * factor));
    } else if (this.capValue !== Infinity && (!ownLoad || delayMs <= this.targetMs / 2 || busy < 0.85)) {
      this.capValue = Math.ceil(this.capValue * 1.1) + 1;
      if (this.capValue >= limit) this.capValue = Infinity;
    }
  }
}

/**
 * The least share of a window's arrivals refused or queued for the cap to fall: at twice capacity about half are; a
 * descheduling of 50 ms at half capacity queues the few that arrive in it, a few hundredths of the window's.
 */
export const MIN_PRESSURE = 0.1;
/**
 * The least ratio of the process's CPU time to the loop's busy time for the busy time to be its own: the thread's
 * work alone gives about 1 (garbage-collection threads add to it); a core shared half and half with a busy loop, 0.5.
 */
export const OWN_CPU = 0.75;
