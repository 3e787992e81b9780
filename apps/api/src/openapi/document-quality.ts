import type { OpenAPIObject } from '@nestjs/swagger';

/*
 * What makes the description trustworthy for a generator or a reader, added once for every operation rather than
 * by a decorator on each: a description on every success response, no `allOf` of a single schema, and an example
 * of every request body and success response, assembled from the `example` of each property (so that the examples
 * change with the schemas; a test validates each one against its schema).
 */

type Json = Record<string, unknown>;
type Response = { description: string; content?: Record<string, { schema?: Json; example?: unknown }> };
type Operation = {
  requestBody?: Response;
  responses: Record<string, Response>;
  callbacks?: Record<string, Record<string, unknown>>;
};

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
/** Used where a property declares no example of its own. */
const EXAMPLE_DATE_TIME = '2026-11-23T10:00:00.000Z';
const EXAMPLE_UUID = '0b5e4d2c-6f1a-4c3e-9a7b-2d8f1e6c5a40';

/** A success response without a description gets one from its status and schema name. */
export function describeSuccessResponses(responses: Record<string, { description: string; content?: unknown }>): void {
  for (const [status, response] of Object.entries(responses as Record<string, Response>)) {
    if (response.description || !status.startsWith('2')) continue;
    const schema = response.content?.['application/json']?.schema;
    const ref = schema?.['$ref'];
    const name = typeof ref === 'string' ? ref.split('/').pop() : undefined;
    const itemsRef = (schema?.['items'] as Json | undefined)?.['$ref'];
    if (typeof itemsRef === 'string') {
      response.description = `An array of ${itemsRef.split('/').pop()}, in id order; more pages: \`Link: rel="next"\`.`;
    } else if (status === '201')
      response.description = name ? `Created: the new ${name}; its URL is in \`Location\`.` : 'Created.';
    else if (status === '204') response.description = 'Done; no body.';
    else response.description = name ? `The ${name}.` : 'OK.';
  }
}

/**
 * `{allOf: [{$ref}]}` with nothing beside it means the referenced schema: say it directly. (Swagger writes that
 * form for an enum property; it is only needed where `description` or `nullable` sits beside the reference.)
 */
export function unwrapSingleAllOf<T>(node: T): T {
  if (Array.isArray(node)) return node.map(unwrapSingleAllOf) as T;
  if (!node || typeof node !== 'object') return node;
  const entries = Object.entries(node as Json);
  const allOf = (node as Json)['allOf'];
  if (entries.length === 1 && Array.isArray(allOf) && allOf.length === 1) return unwrapSingleAllOf(allOf[0]) as T;
  return Object.fromEntries(entries.map(([key, value]) => [key, unwrapSingleAllOf(value)])) as T;
}

/** An `example` on each JSON request body and success response that has none. */
export function addExamples(document: OpenAPIObject): OpenAPIObject {
  const schemas = (document.components?.schemas ?? {}) as Record<string, Json>;
  const bodies: Array<{ schema?: Json; example?: unknown }> = [];
  const collect = (items: Iterable<unknown>) => {
    for (const item of items) {
      for (const method of METHODS) {
        const operation = (item as Record<string, Operation | undefined>)[method];
        if (!operation) continue;
        const json = operation.requestBody?.content?.['application/json'];
        if (json) bodies.push(json);
        for (const [status, response] of Object.entries(operation.responses)) {
          const media = response.content?.['application/json'];
          if (media && status.startsWith('2')) bodies.push(media);
        }
        // A callback's request (an event the service sends) is a body too: `{expression: PathItem}` each.
        for (const callback of Object.values(operation.callbacks ?? {})) collect(Object.values(callback));
      }
    }
  };
  collect(Object.values(document.paths));
  for (const media of bodies) {
    if (media.schema && media.example === undefined) media.example = exampleOf(media.schema, schemas);
  }
  return document;
}

/**
 * An instance of the schema: each property's own `example` (or its enum's first value), every required property
 * and each optional one that has an example. Hand-written: the generators of sample data (e.g. from Redocly or
 * Swagger UI) run in the viewer, not when the description is built.
 */
function exampleOf(schema: Json, schemas: Record<string, Json>, depth = 0): unknown {
  if (depth > 8) throw new Error('OpenAPI examples: schema nesting is deeper than 8 levels');
  if (schema['example'] !== undefined) return schema['example'];
  const ref = schema['$ref'];
  if (typeof ref === 'string') return exampleOf(schemas[ref.split('/').pop() ?? ''] ?? {}, schemas, depth + 1);
  const allOf = schema['allOf'];
  if (Array.isArray(allOf)) return exampleOf({ ...schema, allOf: undefined, ...allOf[0] }, schemas, depth + 1);
  // A union (`WebhookEvent`): an instance of its first member.
  const oneOf = schema['oneOf'];
  if (Array.isArray(oneOf)) return exampleOf(oneOf[0] as Json, schemas, depth + 1);
  const enumValues = schema['enum'];
  if (Array.isArray(enumValues)) return enumValues[0];
  switch (schema['type']) {
    case 'array':
      return [exampleOf((schema['items'] as Json | undefined) ?? {}, schemas, depth + 1)];
    case 'integer':
    case 'number':
      return schema['minimum'] ?? 1;
    case 'boolean':
      return false;
    case 'string':
      if (schema['format'] === 'date-time') return EXAMPLE_DATE_TIME;
      return schema['format'] === 'uuid' ? EXAMPLE_UUID : 'string';
  }
  const required = new Set((schema['required'] as string[] | undefined) ?? []);
  const properties = Object.entries((schema['properties'] as Record<string, Json> | undefined) ?? {});
  return Object.fromEntries(
    properties
      .filter(([name, property]) => required.has(name) || hasExample(property, schemas))
      .map(([name, property]) => [name, exampleOf(property, schemas, depth + 1)]),
  );
}

function hasExample(schema: Json, schemas: Record<string, Json>): boolean {
  if (schema['example'] !== undefined || Array.isArray(schema['enum'])) return true;
  const ref = schema['$ref'];
  if (typeof ref === 'string') return hasExample(schemas[ref.split('/').pop() ?? ''] ?? {}, schemas);
  const allOf = schema['allOf'];
  return Array.isArray(allOf) && allOf.length > 0 && hasExample(allOf[0] as Json, schemas);
}
