import { applyDecorators } from '@nestjs/common';
import { ApiExtension, OpenAPIObject } from '@nestjs/swagger';

/** Extensions that carry an operation's callbacks through Swagger's document, replaced by `addCallbacks`. */
const CALLBACKS_MARKER = 'x-petstore-callbacks';
const SCHEMAS_MARKER = 'x-petstore-callback-schemas';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
type Operation = { callbacks?: Record<string, unknown>; [extension: `x-${string}`]: unknown };

/**
 * OpenAPI 3.0 `callbacks` of an operation (what the service later sends to a URL the request gave: 3.0 has no
 * top-level `webhooks`), written as Callback Objects, with the component schemas their bodies use. Swagger's own
 * `@ApiCallbacks` takes one DTO class per callback and no header parameters, and cannot name a union schema; these
 * ride on the operation as extensions until `addCallbacks` puts them in place.
 */
export function ApiCallbackObjects(
  callbacks: Record<string, unknown>,
  schemas: Record<string, unknown> = {},
): MethodDecorator {
  return applyDecorators(ApiExtension(CALLBACKS_MARKER, callbacks), ApiExtension(SCHEMAS_MARKER, schemas));
}

/** Moves each operation's `@ApiCallbackObjects` into its `callbacks` and their schemas into `components.schemas`. */
export function addCallbacks(document: OpenAPIObject): OpenAPIObject {
  const schemas = ((document.components ??= {}).schemas ??= {});
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = (item as Record<string, Operation | undefined>)[method];
      const callbacks = operation?.[CALLBACKS_MARKER] as Record<string, unknown> | undefined;
      if (!operation || !callbacks) continue;
      const own = operation[SCHEMAS_MARKER] as Record<string, object>;
      delete operation[CALLBACKS_MARKER];
      delete operation[SCHEMAS_MARKER];
      for (const [name, schema] of Object.entries(own)) {
        if (name in schemas && schemas[name] !== schema) throw new Error(`OpenAPI: schema ${name} is declared twice`);
        schemas[name] = schema;
      }
      operation.callbacks = { ...operation.callbacks, ...callbacks };
    }
  }
  return document;
}
