/**
 * A condition of a list's filter: a fixed SQL fragment and the value of its one parameter. `sql` is given the
 * parameter's placeholder (`$3`) and returns the fragment with it (`status = ANY($3)`); the fragment is a constant of
 * the repository, never built from what a client sends. A condition whose value is `undefined` is left out.
 */
export type ListCondition = readonly [value: unknown, sql: (param: string) => string];

/**
 * The one way the repositories write a list's statement (pets, categories, orders, messages, stock levels, webhook
 * deliveries): a fixed head, the conditions of the filter asked for (each a fixed fragment with its own numbered
 * parameter, joined by AND with what the list always filters on), then the order and the limit. Each combination of
 * filters is its own statement text, so PostgreSQL plans it (and, named, keeps its plan) for that combination: the
 * index of the filter given, not `$n IS NULL OR …`, whose generic plan cannot use an index for a condition that may
 * be absent. No SQL builder library: the fragments are the repositories' constants, so a statement is as readable as
 * before, and the set of texts a list can send is small and known (tools/bench/sql snapshots some of them).
 *
 * `select`: `SELECT … FROM …`; `always`: what the list always filters on (with its parameters, `values`, numbered
 * from `$1`); `order`: the ORDER BY and LIMIT, given the limit's placeholder.
 */
export function listStatement(list: {
  select: string;
  always?: { sql: string; values: readonly unknown[] };
  conditions: readonly ListCondition[];
  order: (limitParam: string) => string;
  limit: number;
}): { text: string; params: unknown[] } {
  const params = [...(list.always?.values ?? [])];
  const where = list.always ? [list.always.sql] : [];
  for (const [value, sql] of list.conditions) {
    if (value !== undefined) where.push(sql(`$${params.push(value)}`));
  }
  const filter = where.length ? ` WHERE ${where.join(' AND ')}` : '';
  return { text: `${list.select}${filter} ${list.order(`$${params.push(list.limit)}`)}`, params };
}
