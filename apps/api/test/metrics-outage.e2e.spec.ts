import type { INestApplicationContext } from '@nestjs/common';
import { TEST_DATABASE_ENV, withDatabaseName } from '@petstore/testing';
import { Client } from 'pg';
import { createWorker } from '../src/assembly/assembly';
import { loadConfig, withConfig } from '../src/config/app-config';
import { freePort } from './support/built-app';
import { eventually } from './support/eventually';
import { TestApp } from './support/test-app';

/**
 * Issue 48, item 7b: `/metrics` answered 500 on every process while the database refused connections (the queue
 * gauges' statement failed, and with it the whole scrape), just when the metrics are needed. It answers 200: the
 * process, HTTP, pool and Redis metrics as ever; the gauges read from the database absent, and
 * `metrics_scrape_error{source}` 1 for their source. On a database of its own (copied from the run's template) that
 * stops accepting connections, as database-refusal.e2e.spec.ts does; the API and a worker-only process serve their
 * metrics on METRICS_PORT (no key: on the API's port the administrator's key is verified against the database).
 */
jest.setTimeout(60_000);

const redisUrl = process.env['TEST_REDIS_URL'];

/** `name{labels} value` or `name value` lines of one metric, as `labels value` strings. */
function samples(text: string, name: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .map((line) => line.slice(name.length).trim());
}

describe('/metrics while the database refuses connections (API and worker-only process)', () => {
  let admin: Client;
  let database: string;
  let api: TestApp;
  let worker: INestApplicationContext;
  let apiMetrics: string;
  let workerMetrics: string;

  beforeAll(async () => {
    const serverUrl = process.env[TEST_DATABASE_ENV.serverUrl] as string;
    const template = process.env[TEST_DATABASE_ENV.template] as string;
    database = `petstore_test_metrics_outage_${process.env[TEST_DATABASE_ENV.runId]}_${process.pid}`;
    admin = new Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database} TEMPLATE ${admin.escapeIdentifier(template)}`);
    const databaseUrl = withDatabaseName(serverUrl, database);
    const [apiPort, workerPort] = [await freePort(), await freePort()];
    const shared = {
      database: { acquireTimeoutMs: 1000, queryTimeoutMs: 2000 },
      http: { host: '127.0.0.1' },
      ...(redisUrl ? { auth: { redisUrl } } : {}),
    };
    api = await TestApp.startOn(databaseUrl, { ...shared, observability: { metricsPort: apiPort } });
    apiMetrics = `http://127.0.0.1:${apiPort}/metrics`;
    worker = await createWorker({
      config: withConfig(loadConfig({}), {
        ...shared,
        messaging: { worker: false },
        observability: { metricsPort: workerPort },
      }),
      databaseUrl,
      logger: false,
    });
    workerMetrics = `http://127.0.0.1:${workerPort}/metrics`;
  });

  afterAll(async () => {
    await admin?.query(`ALTER DATABASE ${database} WITH ALLOW_CONNECTIONS true`).catch(() => undefined);
    await api?.close();
    await worker?.close();
    await admin?.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    await admin?.end();
  });

  const scrape = async (url: string) => {
    const response = await fetch(url, { signal: AbortSignal.timeout(20_000) });
    return { status: response.status, text: await response.text() };
  };

  /**
   * What both processes have whatever the database does: process, pool, and on the API Redis (when configured; a
   * worker-only process uses no Redis: the rate-limit counters are the HTTP server's).
   */
  function expectProcessMetrics(url: string, text: string): void {
    expect(samples(text, 'process_resident_memory_bytes')).toHaveLength(1);
    expect(samples(text, 'db_pool_connections_total')).toHaveLength(1);
    expect(samples(text, 'build_info')).toHaveLength(1);
    if (redisUrl && url === apiMetrics) expect(samples(text, 'redis_up')).toEqual(['1']);
  }

  it('answers 200 with everything but the database gauges, which come back with the database', async () => {
    expect((await api.get('/health/live')).status).toBe(200); // an HTTP sample to find below
    for (const url of [apiMetrics, workerMetrics]) {
      const { status, text } = await scrape(url);
      expect(status).toBe(200);
      expectProcessMetrics(url, text);
      expect(samples(text, 'message_queue_depth')).toEqual(['0']);
      expect(samples(text, 'webhook_deliveries_pending')).toEqual(['0']);
      expect(samples(text, 'metrics_scrape_error').sort()).toEqual([
        '{source="message_queue"} 0',
        '{source="webhook_fan_out"} 0',
        '{source="webhook_queue"} 0',
      ]);
    }

    await admin.query(`ALTER DATABASE ${database} WITH ALLOW_CONNECTIONS false`);
    await admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [database],
    );
    try {
      expect((await api.get('/health/ready')).status).toBe(503);
      for (const url of [apiMetrics, workerMetrics]) {
        const { status, text } = await scrape(url);
        expect(status).toBe(200);
        expectProcessMetrics(url, text);
        expect(samples(text, 'message_queue_depth')).toEqual([]);
        expect(samples(text, 'message_queue_failed_messages')).toEqual([]);
        expect(samples(text, 'webhook_deliveries_pending')).toEqual([]);
        expect(samples(text, 'webhook_endpoints_failing')).toEqual([]);
        expect(samples(text, 'webhook_fan_outs_pending')).toEqual([]);
        expect(samples(text, 'metrics_scrape_error').sort()).toEqual([
          '{source="message_queue"} 1',
          '{source="webhook_fan_out"} 1',
          '{source="webhook_queue"} 1',
        ]);
      }
      // The API's HTTP metrics: the readiness 503 just answered is counted.
      const { text } = await scrape(apiMetrics);
      expect(text).toMatch(
        /^http_request_duration_seconds_count\{[^}]*route="\/health\/ready",status_code="503"\} 1$/m,
      );
    } finally {
      await admin.query(`ALTER DATABASE ${database} WITH ALLOW_CONNECTIONS true`);
    }

    for (const url of [apiMetrics, workerMetrics]) {
      const { text } = await eventually(
        () => scrape(url),
        (answer) => samples(answer.text, 'message_queue_depth').length === 1,
      );
      expect(samples(text, 'metrics_scrape_error').sort()).toEqual([
        '{source="message_queue"} 0',
        '{source="webhook_fan_out"} 0',
        '{source="webhook_queue"} 0',
      ]);
    }
  });
});
