import type { FastifyInstance } from 'fastify';
import { isHealthProbe } from '../http-kit/health-probes';
import { routeOf } from '../http-kit/route-label';

interface Sdk {
  start(): void;
  shutdown(): Promise<void>;
}

let sdk: Sdk | null = null;

/**
 * With OTEL_EXPORTER_OTLP_ENDPOINT set, OpenTelemetry traces of the HTTP requests and their
 * PostgreSQL queries, exported over OTLP/HTTP to `<endpoint>/v1/traces`. Unset, no OpenTelemetry
 * module is loaded at all: hence `require` inside the function rather than imports. It must run
 * before `http` and `pg` are first required (main.ts imports `./common/tracing/preload` first of all).
 * The SDK also honours the standard OTEL_* variables (service name, sampler, batch delays).
 */
export function startTracing(endpoint: string | null): boolean {
  if (!endpoint || sdk) return false;
  const { NodeSDK } = require('@opentelemetry/sdk-node');
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http');
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http');
  const { PgInstrumentation } = require('@opentelemetry/instrumentation-pg');
  const started: Sdk = new NodeSDK({
    serviceName: 'petstore-api',
    traceExporter: new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` }),
    instrumentations: [
      // Probes every few seconds would drown the traces that matter.
      new HttpInstrumentation({ ignoreIncomingRequestHook: (request: { url?: string }) => isHealthProbe(request.url) }),
      new PgInstrumentation(),
    ],
  });
  started.start();
  sdk = started;
  return true;
}

/** Exports the spans not sent yet, then stops (at shutdown). */
export async function stopTracing(): Promise<void> {
  const running = sdk;
  sdk = null;
  await running?.shutdown().catch(() => undefined);
}

/**
 * Names each request's span by its route template and gives it the request id (`X-Request-Id`),
 * the key to find its log lines. Only when tracing runs.
 */
export function registerTracingHooks(fastify: FastifyInstance): void {
  if (!sdk) return;
  const { api } = require('@opentelemetry/sdk-node');
  fastify.addHook('onRequest', async (request) => {
    const span = api.trace.getActiveSpan();
    if (!span) return;
    const route = routeOf(request);
    span.setAttribute('petstore.request_id', request.id);
    span.setAttribute('http.route', route);
    span.updateName(`${request.method} ${route}`);
  });
}
