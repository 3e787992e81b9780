import { FeedPosition, PageRequest } from '@petstore/application';
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

/** A position of the event feed (FeedPosition) as an opaque cursor: base64url JSON of its transaction and seq. */
export function encodeFeedCursor(position: FeedPosition): string {
  return Buffer.from(JSON.stringify({ x: position.xact, s: position.seq })).toString('base64url');
}

const MAX_XID8 = 2n ** 64n - 1n;

/** The position a feed cursor holds; anything else is `400 validation_failed` naming `field`. */
export function decodeFeedCursor(cursor: string, field: string): FeedPosition {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    const { x, s } = (parsed ?? {}) as { x?: unknown; s?: unknown };
    if (
      typeof x === 'string' &&
      /^(0|[1-9]\d{0,19})$/.test(x) &&
      BigInt(x) <= MAX_XID8 &&
      typeof s === 'number' &&
      Number.isSafeInteger(s) &&
      s > 0
    ) {
      return { xact: x, seq: s };
    }
  } catch {
    // fall through to the refusal below
  }
  throw ApiError.validation(`${field} is not an event position this service issued.`, [
    { field, message: `${field} is not an event position this service issued` },
  ]);
}

export function pageRequest(query: PageQueryDto): PageRequest {
  return {
    limit: query.limit ?? LIMITS.pageSize.default,
    afterId: query.cursor === undefined ? undefined : decodeCursor(query.cursor),
  };
}
