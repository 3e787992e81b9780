import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { OpenAPIObject } from '@nestjs/swagger';
import { ProcessModule } from './assembly/assembly';
import { Roles } from './assembly/roles';
import { buildOpenApiDocument } from './openapi/openapi';
import { AppConfig } from './config/app-config';

/**
 * The OpenAPI description from the modules' metadata alone: Nest's preview mode registers every module,
 * controller and provider without instantiating them, so no database is opened and nothing listens.
 * The served description (createApp) is built by the same `buildOpenApiDocument` on the started app;
 * tools/openapi/generate.ts writes this one to docs/openapi.json and a test checks that the two are equal.
 */
export async function createOpenApiDocument(config: AppConfig): Promise<OpenAPIObject> {
  const module = ProcessModule.compose({
    roles: new Roles(['http']),
    config,
    databaseUrl: 'postgres://unused.invalid/none',
  });
  const app = await NestFactory.create(module, new FastifyAdapter(), {
    preview: true,
    logger: false,
    abortOnError: false,
  });
  try {
    return buildOpenApiDocument(app);
  } finally {
    await app.close();
  }
}
