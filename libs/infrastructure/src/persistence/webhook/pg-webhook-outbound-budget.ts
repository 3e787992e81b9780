import { Injectable } from '@nestjs/common';
import { WebhookOutboundBudget, WebhookOutboundSettings } from '@petstore/application';
import { TransactionHost } from '../../database/transaction-host';

/**
 * The account's theoretical arrival time moved on by `$3` milliseconds from itself, or from now (`$2`) when that is
 * later: one statement, so two fan-outs at once (on two instances) take from the budget one after the other (the
 * row's lock is held to the end of the fan-out's transaction).
 */
const RESERVE = `INSERT INTO webhook_outbound_budgets AS b (owner_id, tat)
    VALUES ($1, $2::timestamptz + $3 * interval '1 millisecond')
  ON CONFLICT (owner_id) DO UPDATE SET tat = greatest(b.tat, $2::timestamptz) + $3 * interval '1 millisecond'
  RETURNING tat`;

/** WebhookOutboundBudget in `webhook_outbound_budgets`, shared by every worker process. */
@Injectable()
export class PgWebhookOutboundBudget extends WebhookOutboundBudget {
  constructor(
    private readonly host: TransactionHost,
    private readonly settings: WebhookOutboundSettings,
  ) {
    super();
  }

  async reserve(ownerId: number, count: number, now: Date): Promise<Date> {
    const interval = this.settings.intervalMs;
    if (interval === null || count === 0) return now;
    const [row] = await this.host.query<{ tat: Date }>(RESERVE, [ownerId, now, count * interval]);
    return this.settings.startAt(row.tat, count, now);
  }
}
