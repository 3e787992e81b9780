import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CONDITIONAL_PAGE, CONDITIONAL_ROUTE_CONFIG } from './conditional.decorator';
import { entityTag, matchesWeakly, parseEntityTags } from './entity-tag';

/**
 * The requests answered 304 because `If-None-Match` listed the current tag: a validator the client can only have
 * from an earlier response (a tag is 128 bits of a hash). Only these are refunded by the rate limit; a 304 earned by
 * `*`, which matches any representation without knowing one, is charged like a full answer, or `If-None-Match: *`
 * would switch the rate limit off on every single-resource GET (issue 36, finding 1).
 */
const revalidated = new WeakSet<FastifyRequest>();

/** Whether this request's 304 was earned by a tag the client held (not by `*`): the rate limit refunds only those. */
export function revalidatedWithTag(request: FastifyRequest): boolean {
  return revalidated.has(request);
}

/**
 * Enforces `@Conditional` on the Fastify instance, keyed by the route's config, in one `onSend` hook: the tag is
 * made from the JSON text Fastify is about to send (no second serialisation), so it is the tag of exactly that body.
 * - A 200 with a body gets `ETag` (a list's, `@ConditionalPage`, covers its `Link` too).
 * - A `GET`/`HEAD` whose `If-None-Match` lists the tag (weak comparison) or is `*` becomes `304 Not Modified`:
 *   no body, no `Content-Type`/`Content-Length`, the `ETag` and the other headers kept. A malformed `If-None-Match`
 *   is ignored (the full answer is safe). The rate limit's `onSend`, registered after this one, gives the request
 *   its unit back when the 304 was earned by a listed tag (`revalidatedWithTag`), not by `*`.
 */
export function registerConditionalRequests(fastify: FastifyInstance): void {
  // Callback-style: no promise per response.
  fastify.addHook('onSend', (request, reply, payload, done) => {
    const conditional = conditionalOf(request);
    if (reply.statusCode !== 200 || typeof payload !== 'string' || conditional === undefined) {
      return done(null, payload);
    }
    const tag = entityTag(conditional === CONDITIONAL_PAGE ? pageAsSent(payload, reply.getHeader('link')) : payload);
    void reply.header('ETag', tag);
    const listed = isSafe(request) ? parseEntityTags(request.headers['if-none-match']) : null;
    if (listed !== null && matchesWeakly(listed, tag)) {
      if (listed !== '*') revalidated.add(request);
      void reply.code(304);
      reply.removeHeader('content-type');
      reply.removeHeader('content-length');
      return done(null, null);
    }
    done(null, payload);
  });
}

/** `true` for `@Conditional` (one resource), CONDITIONAL_PAGE for `@ConditionalPage` (a list); else undefined. */
function conditionalOf(request: FastifyRequest): true | typeof CONDITIONAL_PAGE | undefined {
  const config = request.routeOptions.config as unknown as Record<string, unknown> | undefined;
  const value = config?.[CONDITIONAL_ROUTE_CONFIG];
  return value === true || value === CONDITIONAL_PAGE ? value : undefined;
}

/** What a page's tag is made from: its body, and its `Link` (set by the pagination's preSerialization hook). */
function pageAsSent(body: string, link: number | string | string[] | undefined): string {
  if (link === undefined) return body;
  return `${body}\n${Array.isArray(link) ? link.join(', ') : String(link)}`;
}

function isSafe(request: FastifyRequest): boolean {
  return request.method === 'GET' || request.method === 'HEAD';
}
