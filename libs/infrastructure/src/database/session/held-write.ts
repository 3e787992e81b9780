/*
 * Held writes (TransactionHost.hold): writes whose outcome the caller does not read, sent together as one
 * statement with the transaction's next statement or its commit. Each is declared once, as a constant, with what
 * it writes (`heldWrite`), so that the session never reads SQL text: which writes may share a statement follows
 * from their declared verb and table, and the combined statement numbers each write's parameters by calling its
 * `sql` with the numbering it needs.
 */

export type HeldVerb = 'insert' | 'update' | 'delete';

/** A held write's declaration; `sql` writes its text with `p(n)` for its n-th parameter (1 … `params`). */
export interface HeldWriteSpec {
  verb: HeldVerb;
  /** The table it writes, as named in its text. */
  table: string;
  /** How many parameters it takes. */
  params: number;
  /** One plain INSERT, UPDATE or DELETE of `table`, without RETURNING. */
  sql: (p: (n: number) => string) => string;
}

/** A declared held write: a constant of a repository. */
export interface HeldWrite {
  readonly verb: HeldVerb;
  readonly table: string;
  readonly params: number;
  /** Its text with `$1` … `$params`: how it is sent alone. */
  readonly text: string;
  /** Its text with its parameters numbered after `offset` others: how it is sent inside a combined statement. */
  textAfter(offset: number): string;
}

/** Declares a held write; refuses a text that does not start with its verb or numbers a parameter it lacks. */
export function heldWrite(spec: HeldWriteSpec): HeldWrite {
  const used = new Set<number>();
  const text = spec.sql((n) => {
    if (!Number.isInteger(n) || n < 1 || n > spec.params) {
      throw new Error(`Held write on ${spec.table}: parameter ${n} of ${spec.params}.`);
    }
    used.add(n);
    return `$${n}`;
  });
  if (used.size !== spec.params) {
    throw new Error(`Held write on ${spec.table}: declares ${spec.params} parameters, uses ${used.size}.`);
  }
  if (text.trimStart().slice(0, spec.verb.length).toLowerCase() !== spec.verb) {
    throw new Error(`Held write on ${spec.table}: declared ${spec.verb}, reads "${text.trimStart().slice(0, 20)}".`);
  }
  return {
    verb: spec.verb,
    table: spec.table,
    params: spec.params,
    text,
    textAfter: (offset) => (offset === 0 ? text : spec.sql((n) => `$${n + offset}`)),
  };
}

/**
 * Whether `next` must see what `held` writes, and so must not share its statement (whose writes all see the database
 * as it was before it): one of them updates or deletes in the table the other writes. Two INSERTs into one table add
 * different rows and may share a statement.
 */
export function overlaps(held: HeldWrite, next: HeldWrite): boolean {
  return held.table === next.table && (held.verb !== 'insert' || next.verb !== 'insert');
}

/** `expect` of `TransactionHost.hold`: how many rows the write must write, and the error when it wrote another. */
export interface ExpectedRows {
  rows: number;
  mismatch: () => Error;
}

/** A held write with its values, waiting in its transaction. */
export interface PendingWrite {
  write: HeldWrite;
  params: unknown[];
  expect?: ExpectedRows;
}

/**
 * The SQLSTATE of `petstore_expect_rows` (migration HeldWriteRowCheck1796000850000): a held write wrote another count
 * of rows than it expected. Its DETAIL is the write's index in the combined statement.
 */
export const ROW_COUNT_MISMATCH = 'PS001';

/** The caller's error for a held write whose row count was wrong, from the database's error fields; else undefined. */
export function mismatchOf(writes: PendingWrite[] | undefined, error: unknown): Error | undefined {
  const fields = error as { code?: unknown; detail?: unknown } | null;
  if (!writes || fields?.code !== ROW_COUNT_MISMATCH || typeof fields.detail !== 'string') return undefined;
  return writes[Number(fields.detail)]?.expect?.mismatch();
}

/**
 * The writes as one statement: `WITH w0 AS (…), w1 AS (…) SELECT`, each write's parameters numbered after those
 * of the writes before it, then one parameter per checked write: the rows it must write. A checked write's count is
 * compared in SQL; only when it differs is `petstore_expect_rows` called (a CASE branch not taken is not evaluated),
 * which raises ROW_COUNT_MISMATCH, so the statement fails and a `COMMIT` sent behind it rolls back. The few shapes a
 * process sends (an order's three writes, say) are built once: the cache is a tree keyed by the declarations.
 */
export function combinedText(writes: PendingWrite[]): string {
  let node = combinedCache;
  for (const { write, expect } of writes) {
    const next = expect ? node.checked : node.unchecked;
    let child = next.get(write);
    if (!child) next.set(write, (child = { checked: new Map(), unchecked: new Map() }));
    node = child;
  }
  if (node.text === undefined) {
    let offset = 0;
    const parts = writes.map(({ write, expect }, i) => {
      const text = write.textAfter(offset);
      offset += write.params;
      return `w${i} AS (${text}${expect ? ' RETURNING 1' : ''})`;
    });
    const checks = writes.flatMap(({ expect }, i) => {
      if (!expect) return [];
      const rows = `$${++offset}`;
      return [
        `(SELECT CASE count(*) WHEN ${rows} THEN 0 ELSE petstore_expect_rows(${i}, ${rows}, count(*)) END` +
          ` FROM w${i}) AS w${i}`,
      ];
    });
    node.text = `WITH ${parts.join(', ')} SELECT ${checks.join(', ') || '1'}`;
  }
  return node.text;
}

interface CombinedNode {
  checked: Map<HeldWrite, CombinedNode>;
  unchecked: Map<HeldWrite, CombinedNode>;
  text?: string;
}

const combinedCache: CombinedNode = { checked: new Map(), unchecked: new Map() };
