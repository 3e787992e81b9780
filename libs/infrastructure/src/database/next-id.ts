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

/**
 * Ids from a sequence that hands out blocks (its INCREMENT is the block's size; a migration sets it): one `nextval`
 * gives `start`, and this process alone uses start … start + size - 1 (Hibernate's "pooled-lo"), so most new rows
 * need no round trip for their id. Safe beside any other user of the sequence (another instance, a plain
 * `nextval`, a column default): each `nextval` value starts a block no one else uses. Ids are unique, not
 * gap-free, and increase within one process only: two instances interleave their blocks, and a restart leaves the
 * rest of a block unused. The increment is read with each block, so a sequence left at 1 gives blocks of one.
 */
export class SequenceBlocks {
  private next = 0;
  private end = 0;
  /** The block being fetched: concurrent callers wait for it rather than each taking a block. */
  private refill?: Promise<void>;

  constructor(private readonly table: string) {}

  async take(host: Pick<TransactionHost, 'query'>): Promise<number> {
    for (;;) {
      if (this.next < this.end) return this.next++;
      if (this.refill) {
        // Another caller's fetch: its failure is its own (this caller then fetches on its own connection).
        await this.refill.catch(() => undefined);
        continue;
      }
      this.refill = this.fetch(host).finally(() => (this.refill = undefined));
      await this.refill;
    }
  }

  private async fetch(host: Pick<TransactionHost, 'query'>): Promise<void> {
    const [row] = await host.query<{ start: string; size: string }>(
      `SELECT nextval(s.id) AS start, q.seqincrement AS size
       FROM (SELECT pg_get_serial_sequence($1, 'id')::regclass AS id) s JOIN pg_sequence q ON q.seqrelid = s.id`,
      [this.table],
    );
    this.next = Number(row.start);
    this.end = this.next + Math.max(1, Number(row.size));
  }
}
