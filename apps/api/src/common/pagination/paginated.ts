import { Page, PageRequest } from '@petstore/application';
import type { FastifyInstance } from 'fastify';
import { encodeCursor } from './cursor';

/**
 * A `Link` of a list paginated otherwise than by `cursor` (the event feed's `startingAfter`, `endingBefore`): the
 * current URL with these query parameters set and those removed.
 */
export interface PageLink {
  rel: 'next' | 'prev';
  set: Record<string, string>;
  remove: string[];
}

/** What a list handler returns: the items for the body, and where the next page starts. */
export class Paginated<T> {
  constructor(
    readonly items: T[],
    readonly nextAfterId: number | null,
    readonly limit: number,
    /** Instead of the `cursor` link of `nextAfterId`: these links. */
    readonly links: PageLink[] = [],
  ) {}

  static of<S, T>(page: Page<S>, request: PageRequest, toDto: (item: S) => T): Paginated<T> {
    return new Paginated(page.items.map(toDto), page.nextAfterId, request.limit);
  }
}

/**
 * Sends a Paginated result as a plain JSON array and, when more items exist, a
 * `Link: <…?cursor=…&limit=…>; rel="next"` header that keeps the other filters.
 * A Fastify `preSerialization` hook rather than a global Nest interceptor: with no
 * interceptor on a route, Nest calls its handler directly (no rxjs Observable, no
 * AsyncResource.bind per request). The hook runs before `onSend`, so the deprecation
 * hook still finds this `Link` and appends its own.
 */
export function registerPagination(fastify: FastifyInstance): void {
  fastify.addHook('preSerialization', (request, reply, payload, done) => {
    if (!(payload instanceof Paginated)) {
      done(null, payload);
      return;
    }
    if (payload.nextAfterId !== null) void reply.header('Link', `<${nextUrl(request.url, payload)}>; rel="next"`);
    const links = payload.links.map((link) => `<${linkUrl(request.url, link, payload.limit)}>; rel="${link.rel}"`);
    if (links.length) void reply.header('Link', links.join(', '));
    done(null, payload.items);
  });
}

function nextUrl(current: string, page: Paginated<unknown>): string {
  const url = new URL(current, 'http://placeholder');
  url.searchParams.set('cursor', encodeCursor(page.nextAfterId as number));
  url.searchParams.set('limit', String(page.limit));
  return `${url.pathname}${url.search}`;
}

function linkUrl(current: string, link: PageLink, limit: number): string {
  const url = new URL(current, 'http://placeholder');
  for (const name of link.remove) url.searchParams.delete(name);
  for (const [name, value] of Object.entries(link.set)) url.searchParams.set(name, value);
  url.searchParams.set('limit', String(limit));
  return `${url.pathname}${url.search}`;
}

/** The `Link` header of a list response, for `@ApiOkResponse({ headers: ApiNextPageLink })`. */
export const ApiNextPageLink = {
  Link: {
    description: 'Present when more items exist: `<…?cursor=…&limit=…>; rel="next"` (other filters kept).',
    schema: { type: 'string' },
  },
};
