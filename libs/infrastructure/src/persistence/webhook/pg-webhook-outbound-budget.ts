import { Injectable } from '@nestjs/common';
import { WebhookOutboundBudget, WebhookOutboundSettings } from '@petstore/application';
import { TransactionHost } from '../../database/transaction-host';

/**
 * Each account's theoretical arrival time moved on by its deliveries ($2, times $3 milliseconds each) from itself, or
 * from now when that is later, on the database's clock; answers how far each now stands ahead of now. One statement
 * for every account of a fan-out, in account order (so two fan-outs at once, on two instances, take the rows' locks in
 * the same order and from the budget one after the other; the locks are held to the end of the fan-out's
 * transaction).
 */
const RESERVE = `INSERT INTO webhook_outbound_budgets AS b (owner_id, tat)
    SELECT owner_id, statement_timestamp() + count * $3 * interval '1 millisecond'
      FROM unnest($1::bigint[], $2::int[]) AS t(owner_id, count) ORDER BY owner_id
  ON CONFLICT (owner_id) DO UPDATE
    SET tat = greatest(b.tat, statement_timestamp()) + (excluded.tat - statement_timestamp())
  RETURNING owner_id, (extract(epoch FROM tat - statement_timestamp()) * 1000)::float8 AS ahead_ms`;

/** WebhookOutboundBudget in `webhook_outbound_budgets`, shared by every worker process. */
@Injectable()
export class PgWebhookOutboundBudget extends WebhookOutboundBudget {
  constructor(
    private readonly host: TransactionHost,
    private readonly settings: WebhookOutboundSettings,
  ) {
    super();
  }

  async reserve(counts: ReadonlyMap<number, number>): Promise<Map<number, number>> {
    const interval = this.settings.intervalMs;
    const waits = new Map([...counts.keys()].map((ownerId) => [ownerId, 0]));
    const taken = [...counts].filter(([, count]) => count > 0);
    if (interval === null || taken.length === 0) return waits;
    const rows = await this.host.query<{ owner_id: string; ahead_ms: number }>(RESERVE, [
      taken.map(([ownerId]) => ownerId),
      taken.map(([, count]) => count),
      interval,
    ]);
    for (const row of rows) {
      const ownerId = Number(row.owner_id);
      waits.set(ownerId, this.settings.delayMs(row.ahead_ms, counts.get(ownerId) ?? 0));
    }
    return waits;
  }
}
