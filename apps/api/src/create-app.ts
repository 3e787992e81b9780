import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule } from '@nestjs/swagger';
import { EnsureAdministrator } from '@petstore/application';
import { AssemblyOptions, ProcessModule } from './assembly/assembly';
import { apiRoles, Roles } from './assembly/roles';
import { ERROR_DOCS_PATH, errorDocsPage } from './common/errors/error-docs';
import { clientErrorHandler, frameworkErrors, PetstoreFastifyAdapter } from './common/errors/framework-errors';
import { registerRequestPipeline } from './assembly/pipeline';
import { BODY_LIMIT_BYTES } from './common/http-kit/body-limit';
import { requestId } from './common/http/request-id';
import { FrontDoor } from './common/http-kit/front-door';
import { buildOpenApiDocument } from './openapi/openapi';
import { OperationShapes } from './common/validation/operation-shapes';
import { createRootLogger, nestLogger, startupNestLogger, RootLogger, silentLogger } from './common/logging/logging';

export interface CreateAppOptions extends Omit<AssemblyOptions, 'logger' | 'roles'> {
  /** What the process runs besides HTTP (main.ts: rolesOf); else HTTP, with MESSAGE_WORKER the workers. */
  roles?: Roles;
  /** The process's pino logger (main.ts: createRootLogger); false logs nothing. */
  logger?: RootLogger | false;
  /** Redis key prefix of the rate-limit counters (tests keep theirs apart). */
  rateLimitPrefix?: string;
}

/**
 * Builds the whole HTTP application (used by main.ts and by the HTTP tests alike):
 * Fastify with the body limit (BODY_LIMIT_BYTES), request ids, the two guards (the API key, the operation's shape),
 * the one pipe and filter, paginated lists sent by a Fastify hook (no global interceptor), the OpenAPI description at
 * /openapi.json and /docs.
 */
export async function createApp(options: CreateAppOptions): Promise<NestFastifyApplication> {
  const { http, auth } = options.config;
  // The server's listener in front of Fastify's (admission answers there, assembly/pipeline.ts).
  const frontDoor = new FrontDoor();
  const adapter = new PetstoreFastifyAdapter({
    serverFactory: frontDoor.serverFactory,
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: requestId,
    requestIdHeader: false,
    forceCloseConnections: 'idle',
    clientErrorHandler,
    frameworkErrors,
    return503OnClosing: false,
    trustProxy: http.trustProxy,
    connectionTimeout: http.connectionTimeoutMs,
    requestTimeout: http.requestTimeoutMs,
    // Node checks the request and headers timeouts every connectionsCheckingInterval (30 s by default).
    http: {
      // A request without Host is refused in the pipeline, in the Error shape (registerHostRequired).
      requireHostHeader: false,
      headersTimeout: http.headersTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, http.headersTimeoutMs),
    },
  });
  const roles = options.roles ?? apiRoles(options.config);
  const logger =
    options.logger === false ? silentLogger() : (options.logger ?? createRootLogger(options.config.observability));
  const app = await NestFactory.create<NestFastifyApplication>(ProcessModule.compose({ ...options, roles }), adapter, {
    bufferLogs: true,
    logger: startupNestLogger(logger), // a failure while composing is main.ts's one line, not Nest's stack
    abortOnError: false,
  });
  try {
    app.useLogger(nestLogger(logger));
    app.flushLogs();
    await registerRequestPipeline(app, {
      ...options.config,
      logger,
      rateLimitPrefix: options.rateLimitPrefix,
      frontDoor,
    });

    const document = buildOpenApiDocument(app);
    app.get(OperationShapes).load(document);
    SwaggerModule.setup('docs', app, document, {
      jsonDocumentUrl: 'openapi.json',
      yamlDocumentUrl: 'openapi.yaml',
      customSiteTitle: 'Petstore API',
    });
    // The list every error body's `documentationUrl` points into, beside the description (public, as /docs is).
    const errorDocs = errorDocsPage();
    app
      .getHttpAdapter()
      .getInstance()
      .get(ERROR_DOCS_PATH, (_request, reply) => reply.type('text/html; charset=utf-8').send(errorDocs));

    await app.init();
    if (auth.adminApiKey) {
      const accounts = new Logger('Accounts');
      const outcome = await app.get(EnsureAdministrator).execute(auth.adminApiKey, {
        // Said, not silent: a key someone may still use stops working (the seed's key is never one of these).
        onRevoked: (count) => accounts.warn(`Revoked the previous ADMIN_API_KEY (${count} key${count > 1 ? 's' : ''})`),
      });
      if (outcome === 'revoked') accounts.warn('ADMIN_API_KEY is a revoked key: it stays refused; set a new one');
      else if (outcome === 'created') accounts.log('Created the administrator key for ADMIN_API_KEY');
      else accounts.log('The ADMIN_API_KEY administrator exists');
    }
    return app;
  } catch (error) {
    // Release the pool (and anything else started) before reporting the failure.
    await app.close().catch(() => undefined);
    throw error;
  }
}
