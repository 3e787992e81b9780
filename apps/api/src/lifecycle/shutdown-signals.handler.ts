import type { LoggerService } from '@nestjs/common';

/**
 * SIGTERM and SIGINT, from the start of the process: the first one runs the stop given to `onStop` (at once,
 * or as soon as start-up hands it over), then the process exits: 0 when the stop went cleanly, 1 when it failed
 * or reported requests cut off at the drain deadline (SHUTDOWN_TIMEOUT_MS). Should stopping take longer than its
 * share, the process exits with 1 anyway within SHUTDOWN_TIMEOUT_MS of the signal, once
 * `atDeadline`'s work (stopping the embedded PostgreSQL, so that it does not outlive the process) is done or has had
 * what is left of it.
 * A repeated signal changes nothing: `npm start` forwards the Ctrl-C that the terminal also sent.
 *
 * Hand-written: NestJS's `enableShutdownHooks` only closes the application on a signal; it knows nothing of
 * the embedded database started before it, of a signal during start-up, or of a deadline.
 */
export class ShutdownSignals {
  private signal: NodeJS.Signals | null = null;
  /** Resolves false when requests in flight were cut off. */
  private stop: (() => Promise<boolean | void>) | null = null;
  private lastly: (() => Promise<void>) | null = null;

  constructor(
    private readonly timeoutMs: number,
    /** SHUTDOWN_TIMEOUT_MS shared out (main.ts gives `shutdownShares`): the drain's part, and when to give up. */
    private readonly shares: { readonly drainMs: number; readonly deadlineMs: number },
    private readonly logger: LoggerService,
  ) {
    for (const name of ['SIGTERM', 'SIGINT'] as const) process.on(name, (received) => this.received(received));
  }

  /** Whether a signal came (during start-up, the caller checks this between steps). */
  get stopping(): boolean {
    return this.signal !== null;
  }

  /** What must still happen if stopping hangs. */
  atDeadline(lastly: () => Promise<void>): void {
    this.lastly = lastly;
  }

  /** What a signal does once start-up has got this far. */
  onStop(stop: () => Promise<boolean | void>): void {
    this.stop = stop;
    if (this.signal) void this.run();
  }

  private received(signal: NodeJS.Signals): void {
    if (this.signal) return;
    this.signal = signal;
    const { drainMs, deadlineMs } = this.shares;
    this.logger.log(
      `${signal} received: stopping (drain at most ${drainMs} ms, exit within ${this.timeoutMs} ms: ` +
        'SHUTDOWN_TIMEOUT_MS)',
    );
    setTimeout(() => {
      this.logger.error(`Still stopping ${deadlineMs} ms after ${signal}: exiting within SHUTDOWN_TIMEOUT_MS anyway`);
      const lastly = this.lastly?.().catch(() => undefined);
      const bound = new Promise((resolve) => setTimeout(resolve, this.timeoutMs - deadlineMs).unref());
      void Promise.race([lastly, bound]).finally(() => process.exit(1));
    }, deadlineMs).unref();
    if (this.stop) void this.run();
  }

  private async run(): Promise<void> {
    try {
      const clean = await this.stop?.();
      process.exit(clean === false ? 1 : 0);
    } catch (error) {
      this.logger.error(`Stopping failed: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    }
  }
}
