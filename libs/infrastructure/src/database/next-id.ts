import type { TransactionHost } from './transaction-host';

/**
 * The first block: the sequence behind `table`'s `id` column (every such column is `bigserial`) resolved once, and
 * its INCREMENT, the block's size.
 */
const FIRST_BLOCK = `SELECT nextval(s.id) AS start, q.seqincrement AS size, s.id::text AS sequence
  FROM (SELECT pg_get_serial_sequence($1, 'id')::regclass AS id) s JOIN pg_sequence q ON q.seqrelid = s.id`;
/** A later block: the increment is read again with each one (a migration may lower it; then ids come one by one). */
const NEXT_BLOCK = `SELECT nextval($1::regclass) AS start, q.seqincrement AS size
  FROM pg_sequence q WHERE q.seqrelid = $1::regclass`;
/** A sequence at INCREMENT 1: one id, a plain `nextval` (raising the increment later only leaves gaps). */
const NEXT_VALUE = `SELECT nextval($1::regclass) AS start`;

/** A block as pg returns it (bigint as text; `size` is the sequence's increment). */
interface BlockRow {
  start: string;
  size?: string;
  sequence?: string;
}

/**
 * The one way a repository gives a new aggregate its id before it is built (`nextId()`): ids from the sequence
 * behind `table`'s `id`, in blocks whose size is the sequence's INCREMENT (a migration sets it; orders' is 50).
 * One `nextval` gives `start`, and this process alone uses start … start + size - 1 (Hibernate's "pooled-lo"), so
 * most new rows need no round trip for their id. Safe beside any other user of the sequence (another instance, a
 * plain `nextval`, a column default): each `nextval` value starts a block no one else uses. Ids are never handed
 * out twice, even when their transaction rolls back; they are not gap-free, and increase within one process only
 * (two instances interleave their blocks, a restart leaves the rest of a block unused).
 *
 * A sequence at INCREMENT 1 costs what a plain `nextval` costs: the sequence's name and increment are read with
 * the first id only, every later id is `SELECT nextval(…)`, and concurrent callers do not wait for each other.
 */
export class SequenceBlocks {
  private next = 0;
  private end = 0;
  /** The sequence (as `regclass` text), once the first block resolved it. */
  private sequence?: string;
  /** The increment was 1 at the last block: each id is one plain `nextval`. */
  private oneByOne = false;
  /** The block being fetched: concurrent callers wait for it rather than each taking a block. */
  private refill?: Promise<void>;

  constructor(private readonly table: string) {}

  async take(host: Pick<TransactionHost, 'query'>): Promise<number> {
    for (;;) {
      if (this.next < this.end) return this.next++;
      if (this.oneByOne) {
        const [row] = await host.query<BlockRow>(NEXT_VALUE, [this.sequence]);
        return Number(row.start);
      }
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
    const [row] =
      this.sequence === undefined
        ? await host.query<BlockRow>(FIRST_BLOCK, [this.table])
        : await host.query<BlockRow>(NEXT_BLOCK, [this.sequence]);
    this.sequence ??= row.sequence;
    const size = Math.max(1, Number(row.size));
    this.next = Number(row.start);
    this.end = this.next + size;
    this.oneByOne = size === 1;
  }
}
