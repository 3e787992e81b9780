import { Injectable } from '@nestjs/common';
import { WebhookOutboundBudget, WebhookOutboundSettings } from '@petstore/application';
import { TransactionHost } from '../../database/transaction-host';

/**
 * The account's theoretical arrival time moved on by `$2` milliseconds from itself, or from now when that is later, on
 * the database's clock; answers how far it now stands ahead of now. One statement, so two fan-outs at once (on two
 * instances) take from the budget one after the other (the row's lock is held to the end of the fan-out's
 * transaction).
 */
const RESERVE = `INSERT INTO webhook_outbound_budgets AS b (owner_id, tat)
    VALUES ($1, statement_timestamp() + $2 * interval '1 millisecond')
  ON CONFLICT (owner_id) DO UPDATE
    SET tat = greatest(b.tat, statement_timestamp()) + $2 * interval '1 millisecond'
  RETURNING (extract(epoch FROM tat - statement_timestamp()) * 1000)::float8 AS ahead_ms`;

/** WebhookOutboundBudget in `webhook_outbound_budgets`, shared by every worker process. */
@Injectable()
export class PgWebhookOutboundBudget extends WebhookOutboundBudget {
  constructor(
    private readonly host: TransactionHost,
    private readonly settings: WebhookOutboundSettings,
  ) {
    super();
  }

  async reserve(ownerId: number, count: number): Promise<number> {
    const interval = this.settings.intervalMs;
    if (interval === null || count === 0) return 0;
    const [row] = await this.host.query<{ ahead_ms: number }>(RESERVE, [ownerId, count * interval]);
    return this.settings.delayMs(row.ahead_ms, count);
  }
}
