import { applyDecorators, Type } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiResponseOptions, getSchemaPath, OpenAPIObject } from '@nestjs/swagger';

/** Named array schemas declared by `ApiOkArrayResponse`, added to the document by `addArraySchemas`. */
const ARRAY_SCHEMAS = new Map<string, Type>();

/**
 * A 200 whose body is a named array schema, as the specification names some (`Pets`: an array of
 * Pet): `@ApiOkArrayResponse('Pets', PetDto, { headers })`. Swagger names only object schemas, so
 * the array is declared here and added to `components.schemas` when the document is built.
 */
export function ApiOkArrayResponse(
  name: string,
  items: Type,
  options: Omit<ApiResponseOptions, 'type' | 'schema'> = {},
): MethodDecorator {
  const declared = ARRAY_SCHEMAS.get(name);
  if (declared && declared !== items) throw new Error(`Schema ${name} is already an array of ${declared.name}.`);
  ARRAY_SCHEMAS.set(name, items);
  return applyDecorators(
    ApiExtraModels(items),
    ApiOkResponse({ ...options, schema: { $ref: `#/components/schemas/${name}` } } as ApiResponseOptions),
  );
}

export function addArraySchemas(document: OpenAPIObject): OpenAPIObject {
  const schemas = ((document.components ??= {}).schemas ??= {});
  for (const [name, items] of ARRAY_SCHEMAS) {
    schemas[name] = { type: 'array', items: { $ref: getSchemaPath(items) } };
  }
  return document;
}
