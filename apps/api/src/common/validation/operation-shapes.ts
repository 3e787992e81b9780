import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { ApiError, ErrorDetail } from '../errors/api-error';
import { MAX_VALIDATION_DETAILS } from './validation.pipe';

/**
 * The names every object inherits (`toString`, `constructor`…) and `prototype`: class-transformer drops them from a
 * body without a word, so the validation pipe never names them.
 */
const INHERITED_NAMES = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);

/** What one operation accepts: its query parameters, and its body's top-level fields (`null`: no body at all). */
interface OperationShape {
  query: ReadonlySet<string>;
  body: ReadonlySet<string> | null | 'any';
}

type SchemaObject = { $ref?: string; properties?: Record<string, unknown>; allOf?: SchemaObject[]; type?: string };

/**
 * What each operation defines, read once from the description the service serves (built from the same decorators
 * as the DTOs), keyed by method and Fastify route (`GET /pets/:petId`). A new operation is covered as declared.
 */
@Injectable()
export class OperationShapes {
  private readonly shapes = new Map<string, OperationShape>();

  load(document: OpenAPIObject): void {
    const schemas = (document.components?.schemas ?? {}) as Record<string, SchemaObject>;
    const resolve = (schema: SchemaObject | undefined): SchemaObject | undefined =>
      schema?.$ref ? resolve(schemas[schema.$ref.replace('#/components/schemas/', '')]) : schema;
    const fieldsOf = (schema: SchemaObject | undefined): Set<string> | 'any' => {
      const resolved = resolve(schema);
      if (!resolved) return 'any';
      if (resolved.allOf) {
        const parts = resolved.allOf.map(fieldsOf);
        return parts.includes('any') ? 'any' : new Set(parts.flatMap((part) => [...(part as Set<string>)]));
      }
      return resolved.properties ? new Set(Object.keys(resolved.properties)) : 'any';
    };
    for (const [path, item] of Object.entries(document.paths)) {
      const route = path.replace(/\{(\w+)\}/g, ':$1');
      for (const [method, operation] of Object.entries(item as Record<string, Record<string, unknown>>)) {
        if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
        const parameters = (operation['parameters'] ?? []) as { in: string; name: string }[];
        const requestBody = operation['requestBody'] as
          | { content?: Record<string, { schema?: SchemaObject }> }
          | undefined;
        this.shapes.set(`${method.toUpperCase()} ${route}`, {
          query: new Set(parameters.filter((p) => p.in === 'query').map((p) => p.name)),
          body: requestBody ? fieldsOf(requestBody.content?.['application/json']?.schema) : null,
        });
      }
    }
  }

  of(method: string, route: string | undefined): OperationShape | undefined {
    return this.shapes.get(`${method === 'HEAD' ? 'GET' : method} ${route}`);
  }
}

/**
 * One rule for every operation: a query parameter or a body field the operation does not define is a 400 naming
 * it, and so is a body sent to an operation that takes none. The validation pipe (whitelist, forbidNonWhitelisted)
 * names unknown fields of the operations that have a query or body DTO; this guard closes what it leaves open:
 * operations with no query or body DTO (`/accounts/me?x=1`, `POST /accounts/me/api-keys {"role":"admin"}`), and
 * the names every object inherits (`toString`, `constructor`, `__proto__`…), in a body or a query, which
 * class-transformer drops without a word.
 * Hand-written: no validator knows the served description. A guard after the API-key guard, so that
 * authentication answers first, as for any other 400.
 */
@Injectable()
export class OperationShapeGuard implements CanActivate {
  constructor(private readonly shapes: OperationShapes) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.getArgByIndex<FastifyRequest>(0);
    const shape = this.shapes.of(request.method, request.routeOptions?.url);
    if (!shape) return true;
    const details: ErrorDetail[] = [];
    const unknown = (name: string, what: string) => {
      const field = name.length > 100 ? `${name.slice(0, 100)}…` : name;
      details.push({ field, message: `${field} is not a known ${what}` });
    };
    // An operation with query parameters has a query DTO, whose pipe names unknown ones with every other problem,
    // but for the names every object inherits (`?__proto__=1`, `?constructor=1`), which class-transformer drops.
    for (const name of Object.keys((request.query ?? {}) as object)) {
      if (shape.query.size === 0 || (INHERITED_NAMES.has(name) && !shape.query.has(name))) {
        unknown(name, 'query parameter');
      }
    }
    const body = request.body;
    if (shape.body === null && body !== undefined && body !== null) {
      const fields = typeof body === 'object' && !Array.isArray(body) ? Object.keys(body) : ['body'];
      for (const name of fields) unknown(name, 'field');
    } else if (shape.body instanceof Set && body && typeof body === 'object' && !Array.isArray(body)) {
      // Other unknown fields are the body DTO's pipe's to name, with every other problem of the body.
      for (const name of Object.keys(body)) {
        if (INHERITED_NAMES.has(name) && !shape.body.has(name)) unknown(name, 'field');
      }
    }
    if (!details.length) return true;
    const shown = details.slice(0, 3).map((d) => d.message);
    const more = details.length > shown.length ? `; and ${details.length - shown.length} more` : '';
    throw ApiError.validation(
      `The request is invalid: ${shown.join('; ')}${more}.`,
      details.slice(0, MAX_VALIDATION_DETAILS),
    );
  }
}
