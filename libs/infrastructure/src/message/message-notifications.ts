import { Logger } from '@nestjs/common';
import { Client } from 'pg';
import { MESSAGES_CHANNEL } from '../persistence/message/typeorm-message.repository';

/** Something that tells the worker a message was queued, so that it need not wait for its next poll. */
export interface WakeUpSource {
  start(onWakeUp: () => void): void;
  stop(): Promise<void>;
}

/**
 * `LISTEN petstore_messages` on a connection of its own: every instance's worker hears of every
 * queued message at once, whichever instance queued it. Only a hint: should the connection drop,
 * it reconnects after `reconnectDelayMs` and the worker's polling covers the gap.
 */
export class PgMessageNotifications implements WakeUpSource {
  private client: Client | null = null;
  private onWakeUp: (() => void) | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private stopped = true;
  private failures = 0;

  constructor(
    private readonly databaseUrl: string,
    private readonly logger = new Logger('MessageWorker'),
    private readonly reconnectDelayMs = 1_000,
  ) {}

  start(onWakeUp: () => void): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.onWakeUp = onWakeUp;
    void this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.databaseUrl });
    this.client = client;
    let lost = false;
    const onLost = (error?: Error) => {
      if (lost) return;
      lost = true;
      if (this.client === client) this.client = null;
      void client.end().catch(() => undefined);
      if (this.stopped) return;
      this.failures++;
      if (this.failures === 1) {
        this.logger.warn(`LISTEN connection lost (${error?.message ?? 'closed'}); polling only until it is back`);
      }
      this.reconnectTimer = setTimeout(() => {
        this.reconnectTimer = null;
        if (!this.stopped) void this.connect();
      }, this.reconnectDelayMs);
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (notification) => {
      if (notification.channel === MESSAGES_CHANNEL) this.onWakeUp?.();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${client.escapeIdentifier(MESSAGES_CHANNEL)}`);
    } catch (error) {
      onLost(error as Error);
      return;
    }
    if (this.stopped || this.client !== client) {
      await client.end().catch(() => undefined);
      return;
    }
    if (this.failures > 0) this.logger.log('LISTEN connection back');
    this.failures = 0;
    // Messages may have been queued while nobody listened.
    this.onWakeUp?.();
  }
}
