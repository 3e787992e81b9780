import type { Account } from '@petstore/domain';

/**
 * "Not yours is not found": what another account owns answers exactly as what does not exist, so that ids
 * cannot be probed. `viewer` undefined is the service itself (a scheduled job), which sees everything.
 */
export function visibleTo<T extends { ownerId: number }>(
  found: T | null,
  viewer: Account | undefined,
  notFound: () => Error,
): T {
  if (!found || (viewer && !viewer.mayActFor(found.ownerId))) throw notFound();
  return found;
}
