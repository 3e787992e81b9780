import type { LoggerService } from '@nestjs/common';

/** After the drain deadline, how long closing may still take before the process exits regardless. */
const CLOSE_GRACE_MS = 5_000;

/**
 * SIGTERM and SIGINT, from the start of the process: the first one runs the stop given to `onStop` (at once,
 * or as soon as start-up hands it over), then the process exits: 0 when the stop went cleanly, 1 when it failed
 * or reported requests cut off at the drain deadline (SHUTDOWN_TIMEOUT_MS). Should stopping hang, the process
 * exits with 1 anyway CLOSE_GRACE_MS after that deadline, once `atDeadline`'s work (stopping the embedded
 * PostgreSQL, so that it does not outlive the process) is done or has had a few seconds.
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
    this.logger.log(`${signal} received: stopping (drain at most ${this.timeoutMs} ms, SHUTDOWN_TIMEOUT_MS)`);
    setTimeout(() => {
      this.logger.error(`Still stopping ${CLOSE_GRACE_MS} ms after the drain deadline: exiting anyway`);
      const lastly = this.lastly?.().catch(() => undefined);
      const bound = new Promise((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref());
      void Promise.race([lastly, bound]).finally(() => process.exit(1));
    }, this.timeoutMs + CLOSE_GRACE_MS).unref();
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
