import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TaggedAnswers } from './catalogue-cache';
import { CONDITIONAL_PAGE, CONDITIONAL_ROUTE_CONFIG } from './conditional.decorator';
import { entityTag, matchesWeakly, parseEntityTags } from './entity-tag';

/**
 * Enforces `@Conditional` on the Fastify instance, keyed by the route's config, in one `onSend` hook: the tag is
 * made from the JSON text Fastify is about to send (no second serialisation), so it is the tag of exactly that body.
 * - A 200 with a body gets `ETag` (a list's, `@ConditionalPage`, covers its `Link` too).
 * - A `GET`/`HEAD` whose `If-None-Match` lists the tag (weak comparison) or is `*` becomes `304 Not Modified`:
 *   no body, no `Content-Type`/`Content-Length`, the `ETag` and the other headers kept. A malformed `If-None-Match`
 *   is ignored (the full answer is safe).
 * A 304 saves the bytes, not the work: the handler ran its query and the body was serialised to make the tag, so the
 * rate limit charges it like any answer (issue 48, item 5: refunded, the tag of an empty list, a constant, made any
 * filter that matches nothing free). Were a tag ever checked without running the query, that 304 could be refunded.
 * With the catalogue cache (`cache`, catalogue-cache.ts): an answer served from it (its bytes, a Buffer) carries the
 * tag kept with it, not hashed again; a 200 it may keep is handed to it with its tag, before any 304 drops the body.
 */
export function registerConditionalRequests(fastify: FastifyInstance, cache?: TaggedAnswers): void {
  // Callback-style: no promise per response.
  fastify.addHook('onSend', (request, reply, payload, done) => {
    const conditional = conditionalOf(request);
    if (reply.statusCode !== 200 || conditional === undefined) return done(null, payload);
    let tag = cache?.cachedTag(request);
    if (tag === undefined) {
      if (typeof payload !== 'string') return done(null, payload);
      tag = entityTag(conditional === CONDITIONAL_PAGE ? pageAsSent(payload, reply.getHeader('link')) : payload);
      cache?.tagged(request, reply, payload, tag);
    }
    void reply.header('ETag', tag);
    const listed = isSafe(request) ? parseEntityTags(request.headers['if-none-match']) : null;
    if (listed !== null && matchesWeakly(listed, tag)) {
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
