import type { FastifyRequest } from 'fastify';

/** The route label of a request that matched no route (never the raw URL: it may hold ids or junk). */
export const UNMATCHED_ROUTE = '(unmatched)';

/** The route as declared (`/pets/:petId`), never the URL with its ids: for logs, metrics and traces. */
export function routeOf(request: FastifyRequest | undefined): string {
  return request?.routeOptions?.url ?? UNMATCHED_ROUTE;
}
