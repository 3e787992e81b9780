import type { OpenAPIObject } from '@nestjs/swagger';
import { ERROR_CODES } from '../errors/error-codes';

/**
 * `components.schemas.ErrorCode`: every code of the `Error` shape, so that a client can switch over them
 * exhaustively. `Error.code` itself stays a string: a code added later must not break a client built today.
 */
export function describeErrorCodes(document: OpenAPIObject): OpenAPIObject {
  const schemas = ((document.components ??= {}).schemas ??= {});
  schemas['ErrorCode'] = {
    type: 'string',
    description:
      'Every `code` an `Error` can carry today (docs/api.md lists when). A client must also accept codes it ' +
      'does not know: new ones may be added.',
    enum: Object.keys(ERROR_CODES),
  };
  const error = schemas['Error'] as { properties?: Record<string, { description?: string }> } | undefined;
  const code = error?.properties?.['code'];
  if (code) code.description = 'Machine-readable error code: one of `ErrorCode`, or a newer one.';
  return document;
}
