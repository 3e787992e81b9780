import type { OpenAPIObject } from '@nestjs/swagger';
import type { Sunsets } from './deprecated.decorator';
import { DEPRECATION_OPENAPI_MARKER, DeprecationPolicy } from './deprecated.decorator';

type Operation = {
  description?: string;
  deprecated?: boolean;
  responses: Record<string, { description: string; content?: unknown; headers?: Record<string, unknown> }>;
  [extension: `x-${string}`]: unknown;
};

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

const HEADERS = {
  Deprecation: {
    description: 'When this operation was deprecated, as `@<unix seconds>` (RFC 9745).',
    schema: { type: 'string', example: '@1795219200' },
  },
  Sunset: {
    description: 'When this operation stops answering, as an HTTP-date (RFC 8594).',
    schema: { type: 'string', example: 'Wed, 30 Jun 2027 00:00:00 GMT' },
  },
  Link: {
    description: 'The operation that replaces this one: `<…>; rel="successor-version"`.',
    schema: { type: 'string' },
  },
};

/**
 * Writes what `@Deprecated` declared into the description: `deprecated: true`, `x-sunset` (from
 * the settings, as an ISO 8601 date-time), a note on the successor, and the 410 after the sunset.
 * Runs before the shared responses and headers are added (`completeDocument`), so that the 410
 * gets them too; `addDeprecationHeaders` runs after.
 */
export function describeDeprecations(document: OpenAPIObject, settings: Sunsets): OpenAPIObject {
  for (const operation of operations(document)) {
    const policy = operation[DEPRECATION_OPENAPI_MARKER] as DeprecationPolicy | undefined;
    if (!policy) continue;
    delete operation[DEPRECATION_OPENAPI_MARKER];
    const sunset = settings[policy.sunset];
    // `{petId}` for each path parameter: the successor as a template.
    const template = policy.successor(new Proxy({}, { get: (_, name) => `{${String(name)}}` }));
    operation.deprecated = true;
    operation['x-sunset'] = sunset.toISOString();
    operation.description = [
      `**Deprecated** since ${policy.since.toISOString()}: use \`${template}\` instead. ` +
        `It answers until its sunset, ${sunset.toISOString()}, then 410 \`operation_sunset\`.`,
      operation.description,
    ]
      .filter(Boolean)
      .join('\n\n');
    operation.responses['410'] ??= {
      description: 'The operation is past its sunset (`operation_sunset`).',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  return document;
}

/** The `Deprecation`, `Sunset` and `Link` headers on every response of every deprecated operation. */
export function addDeprecationHeaders(document: OpenAPIObject): OpenAPIObject {
  for (const operation of operations(document)) {
    if (!operation.deprecated) continue;
    for (const response of Object.values(operation.responses)) response.headers = { ...response.headers, ...HEADERS };
  }
  return document;
}

function operations(document: OpenAPIObject): Operation[] {
  return Object.values(document.paths).flatMap((item) =>
    METHODS.map((method) => (item as Record<string, Operation | undefined>)[method]).filter(
      (op): op is Operation => op !== undefined,
    ),
  );
}
