import { Logger } from '@nestjs/common';
import type { DeliveryReport } from '@petstore/application';
import type { WakeUpSource } from './message-notifications';

export interface MessageWorkerOptions {
  /** Pause between two runs that found nothing to do. */
  pollIntervalMs: number;
  /** Messages taken per run (one transaction). A full batch is followed at once by the next run. */
  batchSize: number;
  /** After a failed run (the database unreachable, say): this pause, doubled per failure … */
  errorDelayMs: number;
  /** … up to this one. */
  maxErrorDelayMs: number;
}

export const DEFAULT_MESSAGE_WORKER_OPTIONS: MessageWorkerOptions = {
  pollIntervalMs: 250,
  batchSize: 50,
  errorDelayMs: 500,
  maxErrorDelayMs: 10_000,
};

/** One run over the queue: in practice the DeliverDueMessages use case. */
export interface DeliveryRun {
  execute(batchSize: number): Promise<DeliveryReport>;
}

/**
 * The message worker: runs DeliverDueMessages over and over, pausing `pollIntervalMs` when the
 * queue had nothing due, and woken at once by `wakeUps` (or `wakeUp()`) when a message is queued.
 * `stop()` lets the run in progress finish (its batch is delivered and committed) and starts no
 * other. Several workers, in one process or many, may share one database: each run locks the rows
 * it takes and skips those locked by others.
 */
export class MessageWorker {
  private loop: Promise<void> | null = null;
  private running = false;
  private wakeUpRequested = false;
  private interruptSleep: (() => void) | null = null;
  private readonly options: MessageWorkerOptions;

  constructor(
    private readonly run: DeliveryRun,
    options: Partial<MessageWorkerOptions> = {},
    private readonly wakeUps: WakeUpSource | null = null,
    private readonly logger = new Logger('MessageWorker'),
  ) {
    this.options = { ...DEFAULT_MESSAGE_WORKER_OPTIONS, ...options };
  }

  get isRunning(): boolean {
    return this.running;
  }

  start(): void {
    if (this.loop) return;
    this.running = true;
    this.loop = this.runLoop();
    this.wakeUps?.start(() => this.wakeUp());
  }

  /** Starts the next run now rather than after the poll interval (a message was just queued). */
  wakeUp(): void {
    this.wakeUpRequested = true;
    this.interruptSleep?.();
  }

  /** Resolves once the run in progress, if any, has finished; no run starts afterwards. */
  async stop(): Promise<void> {
    this.running = false;
    this.interruptSleep?.();
    await this.wakeUps?.stop();
    await this.loop;
    this.loop = null;
  }

  private async runLoop(): Promise<void> {
    let failures = 0;
    while (this.running) {
      this.wakeUpRequested = false;
      let fullBatch = false;
      try {
        const report = await this.run.execute(this.options.batchSize);
        if (failures > 0) this.logger.log('Message delivery works again');
        failures = 0;
        fullBatch = report.claimed >= this.options.batchSize;
        if (report.retried > 0) this.logger.warn(`${report.retried} message deliveries failed; retrying later`);
        if (report.delivered > 0) this.logger.debug?.(`${report.delivered} messages delivered`);
      } catch (error) {
        failures++;
        // Once, then every 20th time: a database outage should not flood the log.
        if (failures === 1 || failures % 20 === 0) {
          this.logger.error(`Message delivery run failed (${failures}×): ${(error as Error)?.message ?? error}`);
        }
      }
      if (!this.running) break;
      if (failures > 0) {
        await this.sleep(Math.min(this.options.maxErrorDelayMs, this.options.errorDelayMs * 2 ** (failures - 1)), false);
      } else if (!fullBatch) {
        await this.sleep(this.options.pollIntervalMs, true);
      }
    }
  }

  /** Waits `ms`; `stop()` always cuts it short, `wakeUp()` only when `wakeable`. */
  private sleep(ms: number, wakeable: boolean): Promise<void> {
    if (!this.running || (wakeable && this.wakeUpRequested)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.interruptSleep = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.interruptSleep = () => {
        if (wakeable || !this.running) done();
      };
    });
  }
}
