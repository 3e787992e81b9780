/** Keyset pagination: items with id > afterId, ascending by id. */
export interface PageRequest {
  limit: number;
  afterId?: number;
}

export interface Page<T> {
  items: T[];
  /** The id to continue after, or null when this was the last page. */
  nextAfterId: number | null;
}

/**
 * Builds a page from `limit + 1` rows fetched in id order: the extra row only
 * tells whether another page exists.
 */
export function pageFromRows<T>(rows: T[], limit: number, idOf: (row: T) => number): Page<T> {
  const items = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  return { items, nextAfterId: hasMore && items.length > 0 ? idOf(items[items.length - 1]) : null };
}
