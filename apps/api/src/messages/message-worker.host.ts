import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { DeliverDueMessages } from '@petstore/application';
import { MessageWorker, MessageWorkerOptions, PgMessageNotifications } from '@petstore/infrastructure';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';

/** The worker's pace (the defaults of MessageWorker: a 250 ms poll, 50 messages a run). */
export const MESSAGE_WORKER_OPTIONS: Partial<MessageWorkerOptions> = {};

/**
 * Runs the message worker with the application when `AppConfig.messageWorker` is on: started
 * once the application is initialised, stopped before the connection pool closes, after the
 * batch in progress has been delivered and committed.
 */
@Injectable()
export class MessageWorkerHost implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('MessageWorker');
  private worker: MessageWorker | null = null;

  constructor(
    private readonly config: AppConfig,
    private readonly deliverDueMessages: DeliverDueMessages,
    private readonly dataSource: DataSource,
  ) {}

  get running(): boolean {
    return this.worker?.isRunning ?? false;
  }

  onApplicationBootstrap(): void {
    if (!this.config.messageWorker) return;
    const url = (this.dataSource.options as { url?: string }).url;
    const wakeUps = url ? new PgMessageNotifications(url, this.logger) : null;
    this.worker = new MessageWorker(this.deliverDueMessages, MESSAGE_WORKER_OPTIONS, wakeUps, this.logger);
    this.worker.start();
    this.logger.log('Message worker started');
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (!this.worker) return;
    await this.worker.stop();
    this.worker = null;
    this.logger.log('Message worker stopped');
  }
}
