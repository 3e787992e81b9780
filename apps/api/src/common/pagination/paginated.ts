import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Page, PageRequest } from '@petstore/application';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { map, Observable } from 'rxjs';
import { encodeCursor } from './cursor';

/** What a list handler returns: the items for the body, and where the next page starts. */
export class Paginated<T> {
  constructor(
    readonly items: T[],
    readonly nextAfterId: number | null,
    readonly limit: number,
  ) {}

  static of<S, T>(page: Page<S>, request: PageRequest, toDto: (item: S) => T): Paginated<T> {
    return new Paginated(page.items.map(toDto), page.nextAfterId, request.limit);
  }
}

/**
 * Sends a Paginated result as a plain JSON array and, when more items exist, a
 * `Link: <…?cursor=…&limit=…>; rel="next"` header that keeps the other filters.
 */
@Injectable()
export class PaginationInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      map((result: unknown) => {
        if (!(result instanceof Paginated)) return result;
        if (result.nextAfterId !== null) {
          const http = context.switchToHttp();
          const request = http.getRequest<FastifyRequest>();
          http.getResponse<FastifyReply>().header('Link', `<${nextUrl(request.url, result)}>; rel="next"`);
        }
        return result.items;
      }),
    );
  }
}

function nextUrl(current: string, page: Paginated<unknown>): string {
  const url = new URL(current, 'http://placeholder');
  url.searchParams.set('cursor', encodeCursor(page.nextAfterId as number));
  url.searchParams.set('limit', String(page.limit));
  return `${url.pathname}${url.search}`;
}

/** The `Link` header of a list response, for `@ApiOkResponse({ headers: ApiNextPageLink })`. */
export const ApiNextPageLink = {
  Link: {
    description: 'Present when more items exist: `<…?cursor=…&limit=…>; rel="next"` (other filters kept).',
    schema: { type: 'string' },
  },
};
