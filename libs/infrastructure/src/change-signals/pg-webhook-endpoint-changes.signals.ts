import { EndpointChangeSubscriber, WebhookEndpointChanges } from '@petstore/application';
import { TransactionHost } from '../database/transaction-host';

/** The channel webhook endpoint changes are announced on, LISTENed on the key revocations' connection. */
export const WEBHOOK_ENDPOINT_CHANGES_CHANNEL = 'webhook_endpoint_changes';
const ANNOUNCE = 'SELECT pg_notify($1, $2)';

/**
 * Webhook endpoint changes, announced with `pg_notify` in the changing transaction, received by the listener that
 * receives key revocations (PgKeyRevocations: one listening connection per instance for both caches).
 */
export class PgWebhookEndpointChanges extends WebhookEndpointChanges {
  constructor(
    private readonly host: TransactionHost,
    private readonly listener: { readonly listening: boolean },
    private readonly subscribers: EndpointChangeSubscriber[],
  ) {
    super();
  }

  get listening(): boolean {
    return this.listener.listening;
  }

  async announce(): Promise<void> {
    await this.host.query(ANNOUNCE, [WEBHOOK_ENDPOINT_CHANGES_CHANNEL, 'changed']);
  }

  subscribe(subscriber: EndpointChangeSubscriber): void {
    this.subscribers.push(subscriber);
  }
}
