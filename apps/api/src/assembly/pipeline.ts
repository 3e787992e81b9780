import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ApiKeySecrets, Clock, VerifiedKeyCache } from '@petstore/application';
import { PRIMARY, ReadReplicas } from '@petstore/infrastructure';
import { ConfigPart } from '../config/app-config';
import { registerReplicaReads } from '../database/replica-reads';
import { Admission } from '../common/admission/admission';
import { admissionClients } from '../common/admission/clients';
import { BearerStrategy } from '../common/auth/bearer.strategy';
import { CatalogueCache, registerCatalogueCache } from '../common/conditional/catalogue-cache';
import { registerConditionalRequests } from '../common/conditional/conditional.hooks';
import { registerDeprecationHooks } from '../common/deprecation/deprecation.hooks';
import { Drain } from '../common/drain/drain.service';
import { GlobalExceptionFilter } from '../common/errors/global-exception.filter';
import { accessLogger, registerAccessLog, RootLogger } from '../common/logging/logging';
import { Metrics, observeHttpAnswer, registerHttpMetrics } from '../metrics/metrics';
import { registerPagination } from '../common/pagination/paginated';
import { registerRateLimit } from '../common/rate-limit/rate-limit.hook';
import { InMemoryRateLimitStore, RedisRateLimitStore } from '../common/rate-limit/rate-limit.store';
import { registerTracingHooks } from '../common/tracing/tracing';
import { createValidationPipe } from '../common/validation/validation.pipe';
import { registerHandlerTimeout } from '../common/http/handler-timeout';
import { registerBodyRate } from '../common/http/body-rate';
import { CompressedDocs } from '../common/http/compressed-docs';
import {
  corsHeadersBeforeCors,
  registerCompression,
  registerCors,
  registerMethodSemantics,
} from '../common/http/http-semantics.hooks';
import { BODY_LIMIT_BYTES } from '../common/http-kit/body-limit';
import {
  registerJsonOnlyBodies,
  registerQueryEncodingCheck,
  registerJsonParser,
  registerStorableTextCheck,
} from '../common/http/input-limits.hooks';
import { registerHostRequired, registerRequestIdHeader, requestId } from '../common/http/request-id';
import { FrontDoor } from '../common/http-kit/front-door';
import { registerSecurityHeaders } from '../common/http-kit/security-headers.hooks';

export interface PipelineSettings {
  http: ConfigPart<'http'>;
  admission: ConfigPart<'admission'>;
  auth: ConfigPart<'auth'>;
  deprecations: ConfigPart<'deprecations'>;
  database: ConfigPart<'database'>;
  /** The process's logger: the access log writes through it. */
  logger: RootLogger;
  /** Redis key prefix of the rate-limit counters (tests keep theirs apart); else REDIS_KEY_PREFIX + `ratelimit:`. */
  rateLimitPrefix?: string;
  /** The listener in front of Fastify's, made with the server (create-app.ts): admission sits there. */
  frontDoor: FrontDoor;
}

/**
 * The request pipeline: every hook and plugin a request passes through, in the order they are registered, which
 * is the order Fastify runs the hooks of one kind (`onRequest` hooks first to last, then the body is parsed,
 * then `preValidation`, the route's Nest handler, `preSerialization`, `onSend`, `onResponse`). Each line says why
 * it stands where it does; a new cross-cutting concern is one more line here, in its folder under `common/`.
 * What Node and Fastify answer before any hook runs (malformed HTTP, a bad URL, Fastify's own errors) is in
 * `common/errors/framework-errors.ts`, installed with the adapter (create-app.ts).
 */
export async function registerRequestPipeline(app: NestFastifyApplication, settings: PipelineSettings): Promise<void> {
  const { http, auth, deprecations } = settings;
  const fastify = app.getHttpAdapter().getInstance();
  // Before Fastify (the server's request listener, FrontDoor): under overload an instance refuses about as many
  // requests as it serves, so a refusal makes no Fastify request and runs no hook (no key verification, no database
  // query, no timer); it answers from a ready-made body with the request id Fastify would give it, the security
  // headers and, the CORS hook running later, the CORS headers of an allowed origin; its access line and duration
  // metric are written as the onResponse hooks below write them. A queued request, admitted when another one ends,
  // enters Fastify from there: the access log's WorkScope, first below, gives it a context of its own. Before the
  // drain, which refuses what it admits once the instance drains. onRoute: the routes' copy that labels refusals.
  // Shares: who sends a request is known before refusal only as far as the key cache knows it (clients.ts: a cached
  // key's account, else the address); full authentication stays after admission. preValidation: a request with a
  // body takes its slot once the body has arrived (a body that trickles holds none), before any other preValidation.
  const metrics = app.get(Metrics);
  const access = accessLogger(settings.logger);
  const admission = new Admission(settings.admission, metrics, {
    requestId,
    refusalHeaders: corsHeadersBeforeCors(http.corsOrigins),
    clientOf: admissionClients(app.get(VerifiedKeyCache), app.get(ApiKeySecrets), http.trustProxy),
    onRefused: (refusal) => {
      access.info(refusal, 'request completed');
      observeHttpAnswer(metrics, refusal.method, refusal.route, refusal.status, refusal.durationMs / 1000);
    },
  });
  admission.watchRoutes(fastify);
  settings.frontDoor.install((next) => admission.front(next));
  // preClose: before the server stops, what still waits for a slot is refused, and admission's timers stop.
  fastify.addHook('preClose', (done) => {
    admission.close();
    done();
  });
  // onRequest, 1st: every later line logged for the request carries its id; onResponse: the access line.
  registerAccessLog(fastify, settings.logger);
  // onResponse: the duration of every response, refusals by the hooks below included (it never answers).
  registerHttpMetrics(fastify, metrics);
  // onRequest: names the span by its route before anything may answer (a no-op without tracing).
  registerTracingHooks(fastify);
  // onRequest: the request id before the first hook that may answer, so that every answer carries it.
  registerRequestIdHeader(fastify);
  // onRoute + onRequest: before the routes are added (the docs routes take their own CSP), and before any hook
  // that may answer, so that every answer has the security headers.
  await registerSecurityHeaders(app);
  // onRequest: an HTTP/1.1 request without Host is refused (Node's own bare 400 is off: requireHostHeader).
  registerHostRequired(fastify);
  // onRequest: a body in another media type, or on a GET, is refused before anything reads or counts it.
  registerJsonOnlyBodies(fastify);
  // onRequest: a query string that is not valid percent-encoding is refused, as the router refuses such a path.
  registerQueryEncodingCheck(fastify);
  // onRequest: the handler's deadline starts as early as possible (503 when it passes; 408 while the body is late).
  registerHandlerTimeout(fastify, http.handlerTimeoutMs);
  // onRequest: a body that trickles is cut (408) long before the handler's deadline: the slow-upload rule.
  registerBodyRate(fastify, { timeoutMs: http.bodyTimeoutMs, minRate: http.bodyMinRate });
  // A plugin that attaches itself to each route as it is added: before the routes.
  await registerCompression(app);
  // onSend: the documentation (/openapi.json, /docs…) compressed once and kept; an instance hook, so it runs before
  // the plugin's route hooks, which then find it compressed.
  app.get(CompressedDocs).register(fastify);
  // CORS answers preflights; method semantics (405, OPTIONS) comes after it and after the request id, so its
  // answers carry both.
  registerMethodSemantics(fastify, await registerCors(app, http.corsOrigins));
  // The body parser (depth check, then JSON) replaces Nest's: it runs after every onRequest hook.
  registerJsonParser(app, BODY_LIMIT_BYTES);
  // preValidation: after parsing, before the guard, pipes and use cases see the request.
  registerStorableTextCheck(fastify);
  // preSerialization: a Paginated result becomes an array and a Link header, before onSend (deprecation) adds to it.
  registerPagination(fastify);
  // onRequest: after the request id (its 503 carries it), before the rate limit (a draining instance counts nothing).
  app.get(Drain).register(fastify);
  // The catalogue cache (CATALOGUE_CACHE). preHandler, on a @CachedRead GET: after every onRequest hook above and
  // below (drain, rate limit, deprecation), so a hit is refused, counted and dated like any answer; it authenticates
  // as the guard does (a request the guard would refuse goes on to it), then answers a hit without entering Nest.
  // Before the replicas' preHandler, so that a hit costs no read routing. Its onSend (through the conditional hook)
  // keeps a miss's 200; another onSend marks an account that wrote (its reads bypass the cache for the maximum age).
  // With replicas, only answers read on the primary are kept: a replica may be behind a change already heard of.
  const replicas = settings.database.replicaUrls.length ? app.get(ReadReplicas) : undefined;
  const bearerForCache = app.get(BearerStrategy);
  const cachedAnswers = registerCatalogueCache(
    fastify,
    app.get(CatalogueCache),
    (request) => bearerForCache.authenticateRequest(request),
    replicas ? { canStore: () => replicas.current()?.target === PRIMARY } : {},
  );
  // onSend: ETag on the responses of @Conditional operations, 304 for a matching If-None-Match (charged by the rate
  // limit like any answer: deciding it ran the query; a cached answer's tag is the one kept with it).
  registerConditionalRequests(fastify, cachedAnswers);
  // onRequest: verifies the key once (the guard reuses it) and counts it; after the cheap refusals above.
  if (auth.rateLimitPerMinute > 0) {
    const store = auth.redisUrl
      ? new RedisRateLimitStore(auth.redisUrl, settings.rateLimitPrefix ?? `${auth.redisKeyPrefix}ratelimit:`)
      : new InMemoryRateLimitStore();
    const limits = {
      perMinute: auth.rateLimitPerMinute,
      signUpsPerHour: auth.signupLimitPerHour,
      authFailuresPerMinute: auth.authFailureLimitPerMinute,
    };
    const bearer = app.get(BearerStrategy);
    registerRateLimit(fastify, store, limits, (request) => bearer.authenticateRequest(request));
  }
  // DATABASE_REPLICA_URLS only. preHandler: a GET that may read from a replica runs in its caller's ReadScope, after
  // every refusal above and with the key verified on the primary; onSend: a write answered 2xx records the account's
  // WAL position before the answer leaves (read-your-writes on every instance).
  if (settings.database.replicaUrls.length) {
    const bearer = app.get(BearerStrategy);
    registerReplicaReads(fastify, app.get(ReadReplicas), (request) => bearer.authenticateRequest(request));
  }
  // onRequest (410 after the sunset, before authentication) and onSend (headers on every response, errors too):
  // last, so that its onSend sees the Link header pagination set.
  registerDeprecationHooks(fastify, deprecations, app.get(Clock));
  // Nest's part, per route: the guard (API key → account, role), then the validation pipe, then the handler; any
  // error on the way becomes the Error shape in the one filter.
  app.useGlobalFilters(new GlobalExceptionFilter());
  app.useGlobalPipes(createValidationPipe());
}
