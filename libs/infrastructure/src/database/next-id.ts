import type { TransactionHost } from './transaction-host';

/**
 * The next value of the sequence behind `table`'s `id` column (every such column is `bigserial`):
 * how each repository's `nextId()` gives a new aggregate its id before it is built. Like any
 * sequence value it is never handed out twice, even when its transaction rolls back.
 */
export async function nextSequenceId(host: Pick<TransactionHost, 'query'>, table: string): Promise<number> {
  const [row] = await host.query<{ id: string }>(`SELECT nextval(pg_get_serial_sequence($1, 'id')) AS id`, [table]);
  return Number(row.id);
}
