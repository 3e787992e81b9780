import { PageRequest } from '@petstore/application';
import { LIMITS } from '@petstore/domain';
import { ApiError } from '../errors/api-error';
import { PageQueryDto } from './page.query.dto';

/** Cursors are opaque to clients: base64url JSON holding the last id seen. */
export function encodeCursor(afterId: number): string {
  return Buffer.from(JSON.stringify({ after: afterId })).toString('base64url');
}

export function decodeCursor(cursor: string): number {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    const after = (parsed as { after?: unknown })?.after;
    if (typeof after === 'number' && Number.isSafeInteger(after) && after > 0) return after;
  } catch {
    // fall through to the refusal below
  }
  throw ApiError.validation('cursor is not a cursor this service issued.', [
    { field: 'cursor', message: 'cursor is not a cursor this service issued' },
  ]);
}

export function pageRequest(query: PageQueryDto): PageRequest {
  return {
    limit: query.limit ?? LIMITS.pageSize.default,
    afterId: query.cursor === undefined ? undefined : decodeCursor(query.cursor),
  };
}
