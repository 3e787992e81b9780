import {
  EndpointChangeSubscriber,
  KeyRevocations,
  RevocationSubscriber,
  WebhookEndpointChanges,
} from '@petstore/application';
import { randomUUID } from 'node:crypto';
import { Client, ClientConfig, Notification } from 'pg';
import { TransactionHost } from '../database/transaction-host';
import { CATALOGUE_CHANGES_CHANNEL, PgCatalogueChanges } from './pg-catalogue-changes.signals';
import { PgWebhookEndpointChanges, WEBHOOK_ENDPOINT_CHANGES_CHANNEL } from './pg-webhook-endpoint-changes.signals';

/** The PostgreSQL channel revocations are announced on (one per database). */
export const KEY_REVOCATIONS_CHANNEL = 'api_key_revocations';

/**
 * The channel each listener proves itself on: it NOTIFYs its own token there through the pool (another
 * session) and counts as listening only while that notification comes back. A connection that LISTENs
 * without receiving (through a transaction-mode pooler, which lends the LISTENing server session to others
 * and forwards nothing) is thereby down, and nothing is cached: a misconfiguration costs speed, never a
 * revoked key living longer than promised.
 */
export const LISTENER_HEARTBEAT_CHANNEL = 'petstore_listener_heartbeat';

/** Hashes per NOTIFY: 100 × 65 characters stays well under PostgreSQL's 8000-byte payload limit. */
const HASHES_PER_NOTIFICATION = 100;
/** `$1` the channel, `$2` the payload: delivered at the commit of the sending transaction, or at once outside one. */
const NOTIFY = 'SELECT pg_notify($1, $2)';

export interface KeyRevocationListenerOptions {
  /** The database to LISTEN on: a direct session (DATABASE_DIRECT_URL, else DATABASE_URL). */
  url: string;
  /** First wait before reconnecting; doubled on each failure up to `maxReconnectDelayMs`. */
  minReconnectDelayMs?: number;
  maxReconnectDelayMs?: number;
  /**
   * A heartbeat NOTIFY this often (1 s), sent through the pool and expected back on the listening
   * connection, so that one gone silent (a frozen server, a partition) or one that cannot receive (a
   * pooler) is noticed within this and `timeoutMs`, not when TCP gives up.
   */
  pingEveryMs?: number;
  /** How long connecting, or a heartbeat's way back, may take before the connection counts as lost. */
  timeoutMs?: number;
  /** Told once when the listener stops receiving (lost, or never proved), not again until it is back (a log line). */
  onError?: (error: unknown) => void;
  /** Told when the listener receives again after `onError` (a log line). */
  onRecovered?: () => void;
}

/**
 * KeyRevocations over PostgreSQL LISTEN/NOTIFY. `announce` sends `pg_notify` on the revoking
 * transaction's connection, so PostgreSQL delivers it at commit, and not at all on rollback.
 * `listen()` keeps one dedicated connection (outside the pool) LISTENing and hands each
 * notification to the subscribers. When that connection is lost the subscribers are reset and
 * `listening` is false until a new connection LISTENs again (then they are reset once more:
 * notifications sent meanwhile were missed).
 *
 * The same connection carries webhook endpoint changes (`endpointChanges`, on a second channel) and catalogue
 * changes (`catalogueChanges`, with its own heartbeat): one listening connection per instance for every cache.
 */
export class PgKeyRevocations extends KeyRevocations {
  private readonly subscribers: RevocationSubscriber[] = [];
  private readonly endpointSubscribers: EndpointChangeSubscriber[] = [];
  /** WebhookEndpointChanges over this listener's connection. */
  readonly endpointChanges: WebhookEndpointChanges;
  /** Catalogue changes over this listener's connection (the catalogue cache). */
  readonly catalogueChanges: PgCatalogueChanges;
  private client: Client | null = null;
  private connected = false;
  private closed = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private pingTimer: NodeJS.Timeout | null = null;
  private reconnectDelayMs: number;
  /** This instance's heartbeat payload (other instances' heartbeats arrive on the same channel). */
  private readonly token = randomUUID();
  private lastHeartbeatAt = 0;
  /** Whether `onError` was told and `onRecovered` was not since. */
  private reportedDown = false;

  constructor(
    private readonly host: TransactionHost,
    private readonly options: KeyRevocationListenerOptions,
  ) {
    super();
    this.reconnectDelayMs = this.minReconnectDelayMs;
    this.endpointChanges = new PgWebhookEndpointChanges(host, this, this.endpointSubscribers);
    this.catalogueChanges = new PgCatalogueChanges(host, this);
  }

  private get minReconnectDelayMs(): number {
    return this.options.minReconnectDelayMs ?? 100;
  }

  get listening(): boolean {
    return this.connected;
  }

  async announce(hashes: readonly string[]): Promise<void> {
    for (let i = 0; i < hashes.length; i += HASHES_PER_NOTIFICATION) {
      const payload = hashes.slice(i, i + HASHES_PER_NOTIFICATION).join(',');
      await this.host.query(NOTIFY, [KEY_REVOCATIONS_CHANNEL, payload]);
    }
  }

  subscribe(subscriber: RevocationSubscriber): void {
    this.subscribers.push(subscriber);
  }

  /**
   * Starts listening; resolves after the first attempt has proved itself (its heartbeat came back) or failed
   * (then it is retried in the background).
   */
  async listen(): Promise<void> {
    this.closed = false;
    await this.connect();
    const deadline = Date.now() + (this.options.pingEveryMs ?? 1000) + (this.options.timeoutMs ?? 2000);
    while (!this.connected && this.client && !this.reconnectTimer && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  /** Stops listening and closes the connection (app.close). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    const client = this.client;
    this.drop();
    this.catalogueChanges.close();
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const timeoutMs = this.options.timeoutMs ?? 2000;
    const config: ClientConfig = {
      connectionString: this.options.url,
      keepAlive: true,
      connectionTimeoutMillis: timeoutMs,
      query_timeout: timeoutMs,
      application_name: 'petstore-key-revocations',
    };
    const client = new Client(config);
    this.client = client;
    client.on('notification', (message: Notification) => this.receive(message));
    client.on('error', (error: unknown) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('The key revocation listener connection ended.')));
    try {
      await client.connect();
      await client.query(
        [
          KEY_REVOCATIONS_CHANNEL,
          WEBHOOK_ENDPOINT_CHANGES_CHANNEL,
          LISTENER_HEARTBEAT_CHANNEL,
          CATALOGUE_CHANGES_CHANNEL,
          this.catalogueChanges.heartbeatChannel,
        ]
          .map((channel) => `LISTEN ${channel}`)
          .join('; '),
      );
    } catch (error) {
      this.lost(client, error);
      return;
    }
    if (this.client !== client || this.closed) return;
    this.catalogueChanges.attach(client);
    // Listening only once its own heartbeat has come back (proved()); until then, and whenever one is late,
    // nothing is cached.
    const startedAt = Date.now();
    const pingEveryMs = this.options.pingEveryMs ?? 1000;
    const beat = () => {
      const last = Math.max(this.lastHeartbeatAt, startedAt);
      if (Date.now() - last > pingEveryMs + timeoutMs) {
        const what = this.connected ? 'stopped arriving' : 'did not arrive';
        this.lost(client, new Error(`The listener's own heartbeat notification ${what} within ${timeoutMs} ms.`));
        return;
      }
      this.host
        .query(NOTIFY, [LISTENER_HEARTBEAT_CHANNEL, this.token])
        .catch((error: unknown) => this.lost(client, error));
    };
    this.pingTimer = setInterval(beat, pingEveryMs);
    this.pingTimer.unref();
    beat();
  }

  /** Its own heartbeat came back: the connection receives what other sessions announce. */
  private proved(): void {
    this.lastHeartbeatAt = Date.now();
    if (this.connected) return;
    this.connected = true;
    // Whatever was announced before LISTEN took effect was missed.
    this.reset();
    this.reconnectDelayMs = this.minReconnectDelayMs;
    if (this.reportedDown) {
      this.reportedDown = false;
      this.options.onRecovered?.();
    }
  }

  private receive(message: Notification): void {
    if (message.channel === LISTENER_HEARTBEAT_CHANNEL) {
      if (message.payload === this.token) this.proved();
      return;
    }
    if (message.channel === CATALOGUE_CHANGES_CHANNEL || message.channel === this.catalogueChanges.heartbeatChannel) {
      this.catalogueChanges.receive(message.channel, message.payload);
      return;
    }
    if (message.channel === WEBHOOK_ENDPOINT_CHANGES_CHANNEL) {
      for (const subscriber of this.endpointSubscribers) subscriber.changed();
      return;
    }
    if (message.channel !== KEY_REVOCATIONS_CHANNEL || !message.payload) return;
    const hashes = message.payload.split(',');
    for (const subscriber of this.subscribers) subscriber.revoked(hashes);
  }

  /** The connection broke (or never opened): forget everything, and try again after a while. */
  private lost(client: Client, error: unknown): void {
    if (this.client !== client) return; // an old connection's late event
    this.drop();
    client.end().catch(() => undefined);
    if (this.closed) return;
    if (!this.reportedDown) {
      this.reportedDown = true;
      this.options.onError?.(error);
    }
    this.reset();
    const delay = this.reconnectDelayMs;
    this.reconnectDelayMs = Math.min(delay * 2, this.options.maxReconnectDelayMs ?? 5000);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.connect();
    }, delay);
    this.reconnectTimer.unref();
  }

  private drop(): void {
    this.connected = false;
    this.lastHeartbeatAt = 0;
    this.client = null;
    this.catalogueChanges.attach(null);
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.pingTimer = null;
  }

  private reset(): void {
    for (const subscriber of this.subscribers) subscriber.reset();
    for (const subscriber of this.endpointSubscribers) subscriber.reset();
    this.catalogueChanges.reset();
  }
}
