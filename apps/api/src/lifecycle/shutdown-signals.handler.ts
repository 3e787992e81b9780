import type { LoggerService } from '@nestjs/common';

/**
 * SIGTERM and SIGINT, from the start of the process: the first one runs the stop given to `onStop` (at once,
 * or as soon as start-up hands it over), then the process exits: 0 when the stop succeeded, 1 when it failed
 * or when it was not done `timeoutMs` (SHUTDOWN_TIMEOUT_MS) after the signal. A repeated signal changes
 * nothing: `npm start` forwards the Ctrl-C that the terminal also sent to the process.
 *
 * Hand-written: NestJS's `enableShutdownHooks` only closes the application on a signal; it knows nothing of
 * the embedded database started before it, of a signal during start-up, or of a deadline.
 */
export class ShutdownSignals {
  private signal: NodeJS.Signals | null = null;
  private stop: (() => Promise<void>) | null = null;

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

  /** What a signal does once start-up has got this far. */
  onStop(stop: () => Promise<void>): void {
    this.stop = stop;
    if (this.signal) void this.run();
  }

  private received(signal: NodeJS.Signals): void {
    if (this.signal) return;
    this.signal = signal;
    this.logger.log(`${signal} received: stopping (at most ${this.timeoutMs} ms, SHUTDOWN_TIMEOUT_MS)`);
    setTimeout(() => {
      this.logger.error(`Not stopped ${this.timeoutMs} ms after ${signal} (SHUTDOWN_TIMEOUT_MS): exiting anyway`);
      process.exit(1);
    }, this.timeoutMs).unref();
    if (this.stop) void this.run();
  }

  private async run(): Promise<void> {
    try {
      await this.stop?.();
      process.exit(0);
    } catch (error) {
      this.logger.error(`Stopping failed: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    }
  }
}
