import type { OpenAPIObject } from '@nestjs/swagger';
import { CONDITIONAL_OPENAPI_MARKER } from './conditional.decorator';

type Response = { description: string; content?: unknown; headers?: Record<string, unknown> };
type Operation = {
  parameters?: unknown[];
  responses: Record<string, Response>;
  [extension: `x-${string}`]: unknown;
};

const ETAG = { $ref: '#/components/headers/ETag' };
const ERROR = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };

/** The header, declared once in `components.headers`. */
export const ETAG_HEADER = {
  required: true,
  description:
    'The entity tag of the representation in the body (strong; it changes exactly when the body does): send it ' +
    'back in `If-None-Match` to revalidate, or in `If-Match` to change the resource only if nobody changed it since.',
  schema: { type: 'string', maxLength: 64, example: '"q3v8AyNHfsn0e5q3PzbYwQ"' },
};

const PAGE_ETAG = { $ref: '#/components/headers/PageETag' };

/** A list's tag (`@ConditionalPage`), declared once in `components.headers`. */
export const PAGE_ETAG_HEADER = {
  required: true,
  description:
    'The entity tag of this page as sent (its items and its `Link` header; strong): send it back in ' +
    "`If-None-Match` to revalidate the page. It changes when an item of the page, the page's items or its next " +
    'page do.',
  schema: { type: 'string', maxLength: 64, example: '"dGhlIHBhZ2UgYXMgc2Vu"' },
};

const TAG_LIST = { type: 'string', maxLength: 1024, example: '"q3v8AyNHfsn0e5q3PzbYwQ"' };

/**
 * Writes what `@Conditional` declared into the description: on a `GET`, the `If-None-Match` header and the 304; on a
 * `PUT`/`PATCH`/`DELETE`, the `If-Match` and `If-None-Match` headers and the 412 `precondition_failed`; `ETag` on
 * the 200 (and the 304).
 * Runs before the shared responses and headers are added (`completeDocument`), so that the 304 and 412 get them too.
 */
export function describeConditionalRequests(document: OpenAPIObject): OpenAPIObject {
  const headers = ((document.components ??= {}).headers ??= {});
  headers['ETag'] = ETAG_HEADER;
  headers['PageETag'] = PAGE_ETAG_HEADER;
  for (const item of Object.values(document.paths)) {
    for (const [method, operation] of Object.entries(item as Record<string, Operation>)) {
      const marker = operation?.[CONDITIONAL_OPENAPI_MARKER] as { resource: string; page?: true } | undefined;
      if (!marker) continue;
      delete operation[CONDITIONAL_OPENAPI_MARKER];
      if (marker.page) {
        describePage(operation);
        continue;
      }
      const { resource } = marker;
      if (operation.responses['200']) {
        operation.responses['200'] = {
          ...operation.responses['200'],
          headers: { ...operation.responses['200'].headers, ETag: ETAG },
        };
      }
      if (method === 'get') {
        (operation.parameters ??= []).push({
          in: 'header',
          name: 'If-None-Match',
          required: false,
          description:
            `The \`ETag\` of the ${resource} you hold (a list, or \`*\`): when it still matches, the answer is 304 ` +
            'without a body; it counts against the rate limit like a full answer (the resource is read to compare).',
          schema: TAG_LIST,
        });
        operation.responses['304'] = {
          description: `Not modified: the ${resource} is still the one \`If-None-Match\` names; no body.`,
          headers: { ETag: ETAG },
        };
      } else {
        (operation.parameters ??= []).push({
          in: 'header',
          name: 'If-Match',
          required: false,
          description:
            `Change the ${resource} only if it is still the one with this \`ETag\` (a list, or \`*\`): else 412 ` +
            '`precondition_failed`, and nothing changes. Strong comparison: a weak tag (`W/"…"`) never matches (its ' +
            '412 says so). Without it, the change applies whatever the current state.',
          schema: TAG_LIST,
        });
        (operation.parameters ??= []).push({
          in: 'header',
          name: 'If-None-Match',
          required: false,
          description:
            `Change the ${resource} only if its \`ETag\` is not listed (RFC 9110, 13.1.2): else 412. \`*\` means ` +
            `"only if it does not exist yet"; the ${resource} exists (else 404), so \`*\` is always 412.`,
          schema: TAG_LIST,
        });
        operation.responses['412'] = {
          description:
            `The ${resource} changed since you read the \`ETag\` sent in \`If-Match\`, or \`If-None-Match\` ` +
            'lists its tag or is `*` (`precondition_failed`): nothing was changed; read it again, then decide. A ' +
            'weak tag in `If-Match` has its own message: send the `ETag` as it came, without `W/`.',
          content: ERROR,
        };
      }
    }
  }
  return document;
}

/** A list's `ETag` on the 200, and the `If-None-Match` and 304 of its GET (`@ConditionalPage`). */
function describePage(operation: Operation): void {
  if (operation.responses['200']) {
    operation.responses['200'] = {
      ...operation.responses['200'],
      headers: { ...operation.responses['200'].headers, ETag: PAGE_ETAG },
    };
  }
  (operation.parameters ??= []).push({
    in: 'header',
    name: 'If-None-Match',
    required: false,
    description:
      'The `ETag` of this page as you hold it (a list, or `*`): when the page is still the same (its items and ' +
      'its `Link`), the answer is 304 without a body; it counts against the rate limit like a full answer (the ' +
      'page is read to compare).',
    schema: TAG_LIST,
  });
  // The 304 keeps the page's headers (its `Link`, which the tag covers), as the 200 declares them.
  operation.responses['304'] = {
    description: 'Not modified: the page is still the one `If-None-Match` names (items and `Link`); no body.',
    headers: { ...operation.responses['200']?.headers, ETag: PAGE_ETAG },
  };
}
