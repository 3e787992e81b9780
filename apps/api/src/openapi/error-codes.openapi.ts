import type { OpenAPIObject } from '@nestjs/swagger';
import { ERROR_CODES, type PublicErrorCode } from '../common/errors/error-codes';

/** Answered before a request reaches an operation (by path, by the HTTP parser): in `ErrorCode`, on no operation. */
export const CODES_OF_NO_OPERATION: readonly PublicErrorCode[] = [
  'method_not_allowed',
  'request_timeout',
  'headers_too_large',
  'unsupported_content_encoding',
];

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
type Json = Record<string, unknown>;
type Response = { description: string; content?: Record<string, { schema?: Json }> };

/** The codes a status can carry (ERROR_CODES). */
function codesOfStatus(status: number): PublicErrorCode[] {
  return (Object.keys(ERROR_CODES) as PublicErrorCode[]).filter((code) => ERROR_CODES[code].includes(status));
}

/**
 * Every code the service can answer, in the description:
 * - `components.schemas.ErrorCode`: all of them, so that a client can switch over them. `Error.code` itself stays a
 *   string: a code added later must not break a client built today.
 * - Per operation and status: each error response's schema is the `Error` with its `code` narrowed to the codes that
 *   operation answers with that status (openapi-typescript makes it a union per operation). A status with one code
 *   (401 `unauthorized`, 500 `internal_error`, …) implies it; a status with several (400, 409, 422, 429) names the
 *   operation's codes in backticks in its description, written beside the rule they come from (the controllers'
 *   `@ApiErrors`, `completeDocument`). An error response that names none fails the build here, so no status goes
 *   undescribed; every HTTP test checks the codes it receives against these lists (test/support/openapi-contract).
 */
export function describeErrorCodes(document: OpenAPIObject): OpenAPIObject {
  const schemas = ((document.components ??= {}).schemas ??= {});
  schemas['ErrorCode'] = {
    type: 'string',
    description:
      'Every `code` an `Error` can carry today (docs/api.md says when). Each operation lists its own per status; ' +
      `${CODES_OF_NO_OPERATION.map((code) => `\`${code}\``).join(', ')} are answered before a request reaches ` +
      'an operation. A client must also accept codes it does not know: new ones may be added.',
    enum: Object.keys(ERROR_CODES),
  };
  const error = schemas['Error'] as { properties?: Record<string, { description?: string }> } | undefined;
  const code = error?.properties?.['code'];
  if (code) code.description = 'Machine-readable error code: one of `ErrorCode`, or a newer one.';

  for (const [route, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = (item as Record<string, { responses: Record<string, Response> } | undefined>)[method];
      if (!operation) continue;
      for (const [status, response] of Object.entries(operation.responses)) {
        const schema = response.content?.['application/json']?.schema;
        if (Number(status) < 400 || schema?.['$ref'] !== '#/components/schemas/Error') continue;
        const possible = codesOfStatus(Number(status));
        const named = [...response.description.matchAll(/`([a-z]+(?:_[a-z]+)*)`/g)].map((match) => match[1]);
        const codes = possible.length === 1 ? possible : possible.filter((c) => named.includes(c));
        if (!codes.length) {
          throw new Error(
            `${method.toUpperCase()} ${route} ${status}: its description names none of the codes of ${status} ` +
              `(${possible.join(', ') || 'none in ERROR_CODES'}); name them in backticks.`,
          );
        }
        operation.responses[status] = {
          ...response,
          content: {
            'application/json': {
              schema: {
                allOf: [
                  { $ref: '#/components/schemas/Error' },
                  { type: 'object', required: ['code'], properties: { code: { type: 'string', enum: codes } } },
                ],
              },
            },
          },
        };
      }
    }
  }
  return document;
}
