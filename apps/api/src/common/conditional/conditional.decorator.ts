import { applyDecorators, createParamDecorator, ExecutionContext } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import type { Precondition } from '@petstore/application';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error';
import { MergeRouteConfig } from '../http-kit/route-config';
import { EntityTagList, entityTagOf, matchesStrongly, matchesWeakly, parseEntityTags } from './entity-tag';

/** The marker rides in the Fastify route's config, where the hook finds it for every request… */
export const CONDITIONAL_ROUTE_CONFIG = 'petstoreConditional';
/** …and in a private OpenAPI extension, which `describeConditionalRequests` turns into headers and responses. */
export const CONDITIONAL_OPENAPI_MARKER = 'x-petstore-conditional';

/**
 * An operation on one resource that takes part in conditional requests (RFC 9110, 13), in one line,
 * `@Conditional('pet')` (the resource, as its 412 names it):
 * - its 200 responses carry `ETag`, the entity tag of the body (conditional.hooks.ts);
 * - a `GET` (and `HEAD`) answers `304 Not Modified`, without a body, when `If-None-Match` lists that tag or is `*`;
 *   a 304 is charged by the rate limit like a full answer (the tag is the body's, so the query ran);
 * - a `PUT`/`PATCH`/`DELETE` takes `If-Match` (and `If-None-Match`) through `@IfMatch(…)` on a parameter, and
 *   answers 412 `precondition_failed` when the resource changed meanwhile (or, for `If-None-Match: *`, exists).
 * The description gets the headers and the 304/412 responses (`describeConditionalRequests`).
 */
export function Conditional(resource: string): MethodDecorator {
  return applyDecorators(
    MergeRouteConfig({ [CONDITIONAL_ROUTE_CONFIG]: true }),
    ApiExtension(CONDITIONAL_OPENAPI_MARKER, { resource }),
  );
}

/** The route config's value of `@ConditionalPage()`: the tag covers the page's body and its `Link`. */
export const CONDITIONAL_PAGE = 'page';

/**
 * A list operation that takes part in conditional requests, in one line: its 200 carries `ETag`, the tag of the page
 * as sent (its JSON body and its `Link` header: a page whose items did not change but which now has a next page is
 * another page), and a `GET` answers 304 to an `If-None-Match` that lists it, charged by the rate limit as
 * `@Conditional`'s are. A list takes no `If-Match`: nothing changes a page.
 */
export function ConditionalPage(): MethodDecorator {
  return applyDecorators(
    MergeRouteConfig({ [CONDITIONAL_ROUTE_CONFIG]: CONDITIONAL_PAGE }),
    ApiExtension(CONDITIONAL_OPENAPI_MARKER, { resource: 'page', page: true }),
  );
}

/**
 * The request's `If-Match` and `If-None-Match` as a precondition for the use case, which asks it under the resource's
 * row lock, with the tag of the representation the resource has then (`represent`, the DTO the `GET` sends):
 * - `If-Match` holds when that tag is listed (strong comparison), or is `*` (any current representation);
 * - `If-None-Match` holds when that tag is not listed (weak comparison) and it is not `*` (RFC 9110, 13.1.2: on a
 *   method other than GET/HEAD a false condition is 412). `*` asks for creation only ("no current representation"),
 *   and every resource these operations change exists (one that does not is a 404 before any precondition), so `*`
 *   is always 412: a client meaning "do not overwrite" is never overwritten (issue 36, 5b: it used to be ignored).
 * Without either header, undefined: the change runs as it always did. A value that is not `*` or a list of entity
 * tags is refused (400 `validation_failed`) rather than silently never matching. `@IfMatch(PetDto.from)
 * precondition?: Precondition<Pet>`.
 */
export const IfMatch = createParamDecorator(
  <T>(represent: (current: T) => unknown, context: ExecutionContext): Precondition<T> | undefined => {
    const headers = context.switchToHttp().getRequest<FastifyRequest>().headers;
    const ifMatch = preconditionHeader('If-Match', headers['if-match']);
    const ifNoneMatch = preconditionHeader('If-None-Match', headers['if-none-match']);
    if (ifMatch === undefined && ifNoneMatch === undefined) return undefined;
    return {
      holds: (current: T) => {
        const tag = entityTagOf(represent(current));
        return (
          (ifMatch === undefined || matchesStrongly(ifMatch, tag)) &&
          (ifNoneMatch === undefined || !matchesWeakly(ifNoneMatch, tag))
        );
      },
      failure: (current: T) => {
        if (ifMatch === undefined || ifMatch === '*' || !ifMatch.some((listed) => listed.startsWith('W/'))) return;
        return matchesStrongly(ifMatch, entityTagOf(represent(current))) ? undefined : WEAK_IF_MATCH;
      },
    };
  },
);

/** The 412 of an `If-Match` that lists a weak tag (and no current strong one): reading again would not help. */
const WEAK_IF_MATCH =
  'If-Match needs a strong entity tag: it compares strongly (RFC 9110, 13.1.1), so a weak tag (W/"…") never ' +
  'matches. Send the ETag exactly as the API sent it, without W/ (a proxy or cache may have weakened it).';

function preconditionHeader(name: string, header: string | string[] | undefined): EntityTagList | undefined {
  if (header === undefined) return undefined;
  const listed = parseEntityTags(header);
  if (listed === null) {
    const message = `${name} must be \`*\` or a comma-separated list of entity tags, as ETag sends them ("…").`;
    throw new ApiError(400, 'validation_failed', message, [{ field: name, message }]);
  }
  return listed;
}
