import { readFileSync } from 'node:fs';
import { createServer, IncomingMessage, Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { testDatabaseUrl } from '@petstore/testing';
import { ApiProcess, ensureBuilt } from './support/built-app';

jest.setTimeout(240_000);

interface OtlpSpan {
  traceId: string;
  name: string;
  attributes: Array<{ key: string; value: { stringValue?: string } }>;
}

/** An OTLP/HTTP receiver (JSON), as a collector would be: keeps every span exported to it. */
async function startReceiver(): Promise<{ server: Server; url: string; spans: OtlpSpan[]; paths: string[] }> {
  const spans: OtlpSpan[] = [];
  const paths: string[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      paths.push(request.url ?? '');
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      for (const resource of body.resourceSpans ?? []) {
        for (const scope of resource.scopeSpans ?? []) spans.push(...scope.spans);
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, spans, paths };
}

const attribute = (span: OtlpSpan, key: string) => span.attributes.find((a) => a.key === key)?.value.stringValue;

describe('tracing with OpenTelemetry (the built service, real PostgreSQL)', () => {
  let databaseUrl: string;
  const preload = join(__dirname, 'support/loaded-modules.cjs');

  beforeAll(async () => {
    ensureBuilt();
    databaseUrl = await testDatabaseUrl();
  });

  const start = (env: Record<string, string>, loadedFile: string) =>
    ApiProcess.start({
      DATABASE_URL: databaseUrl,
      MESSAGE_WORKER: 'false',
      RATE_LIMIT_PER_MINUTE: '0',
      LOG_LEVEL: 'warn',
      NODE_OPTIONS: `--require ${preload}`,
      LOADED_MODULES_FILE: loadedFile,
      ...env,
    });

  it("with OTEL_EXPORTER_OTLP_ENDPOINT, exports the request's span with its id and PostgreSQL spans", async () => {
    const receiver = await startReceiver();
    const loadedFile = join(tmpdir(), `petstore-otel-${randomUUID()}.json`);
    const api = await start({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, loadedFile);
    try {
      const requestId = `trace-${randomUUID()}`;
      const response = await api.request('GET', '/pets/123456789', { headers: { 'x-request-id': requestId } });
      expect(response.status).toBe(401);
      const signUp = await api.request('POST', '/accounts', {
        body: { name: 'Traced' },
        headers: { 'x-request-id': `${requestId}-2` },
      });
      expect(signUp.status).toBe(201);
      expect(await api.stop()).toBe(0); // shutting down flushes the spans not exported yet

      expect(receiver.paths.every((path) => path === '/v1/traces')).toBe(true);
      const server = receiver.spans.find((span) => attribute(span, 'petstore.request_id') === requestId);
      expect(server).toBeDefined();
      expect(server?.name).toBe('GET /pets/:petId');
      expect(attribute(server!, 'http.route')).toBe('/pets/:petId');

      const signUpSpan = receiver.spans.find((span) => attribute(span, 'petstore.request_id') === `${requestId}-2`);
      const queries = receiver.spans.filter(
        (span) => span.traceId === signUpSpan?.traceId && attribute(span, 'db.system') === 'postgresql',
      );
      expect(queries.length).toBeGreaterThan(0);
      const loaded: string[] = JSON.parse(readFileSync(loadedFile, 'utf8'));
      expect(loaded.some((file) => file.includes('/@opentelemetry/sdk-node/'))).toBe(true);
    } finally {
      await api.stop();
      receiver.server.close();
    }
  });

  it('without it, loads no OpenTelemetry SDK, exporter or instrumentation', async () => {
    const loadedFile = join(tmpdir(), `petstore-otel-${randomUUID()}.json`);
    const api = await start({}, loadedFile);
    expect((await api.request('GET', '/health/ready')).status).toBe(200);
    expect(await api.stop()).toBe(0);
    // prom-client probes for the no-op @opentelemetry/api (for exemplars); nothing else may load.
    const loaded: string[] = JSON.parse(readFileSync(loadedFile, 'utf8'));
    expect(loaded.filter((file) => !file.includes('/@opentelemetry/api/'))).toEqual([]);
  });
});
