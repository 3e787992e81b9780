import { ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMigratedDatabase, TEST_DATABASE_ENV, TEST_DATABASE_PREFIX, withDatabaseName } from '@petstore/testing';
import { Client } from 'pg';
import { stringify } from 'yaml';
import { ApiProcess, ensureBuilt, freePort } from './support/built-app';
import {
  alertingRules,
  dashboardExpressions,
  metricNames,
  onPath,
  readRules,
  recordingRules,
} from './support/prometheus';
import { TcpProxy } from './support/tcp-proxy';

/**
 * A real Prometheus (Debian's `prometheus` package; .ci/run installs it) scraping a real instance of the built
 * service, with deploy/prometheus/petstore.rules.yml loaded, through a short scenario: traffic, a burst the admission
 * limit sheds, PostgreSQL refusing connections, then Redis. Every recording rule, every dashboard expression and
 * every metric a rule names returns data, and the alerts the scenario causes fire (and not before their cause).
 *
 * The rules are loaded as shipped except their `for:`, set to 0 s so that an alert fires at the first evaluation
 * that finds its condition (the windows are kept: a rate over an hour of a series two seconds old is a rate over
 * those two seconds). The database and Redis are reached through TCP proxies the test closes; the replica is the
 * primary itself, which is no standby, so the service keeps it out (PetstoreReplicaOut).
 */
jest.setTimeout(120_000);

const PROMETHEUS = onPath('prometheus') ?? '';
const redisUrl = process.env['TEST_REDIS_URL'] ?? '';
const skip = !PROMETHEUS
  ? 'the prometheus binary is not installed (Debian: apt-get install prometheus; .ci/run does)'
  : !redisUrl
    ? 'TEST_REDIS_URL is not set (the scenario takes Redis down)'
    : null;
if (skip) console.warn(`prometheus-scenario.e2e: skipped: ${skip}.`);

const ADMIN_KEY = 'prometheus-scenario-admin-key-0123456789';
/** Each phase's alerts are awaited this long at most (a few evaluations; the test's whole bound is well over it). */
const ALERT_WAIT_MS = 30_000;

interface Alert {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
}

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

class Prometheus {
  private output = '';

  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {
    child.stdout?.on('data', (chunk: Buffer) => (this.output += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (this.output += chunk.toString('utf8')));
  }

  static async start(binary: string, dir: string, target: string): Promise<Prometheus> {
    const rules = readRules();
    for (const group of rules.groups) for (const rule of group.rules) if ('alert' in rule) rule.for = '0s';
    await writeFile(join(dir, 'rules.yml'), stringify(rules));
    await writeFile(
      join(dir, 'prometheus.yml'),
      stringify({
        global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
        rule_files: [join(dir, 'rules.yml')],
        scrape_configs: [{ job_name: 'petstore', static_configs: [{ targets: [target] }] }],
      }),
    );
    const port = await freePort();
    const child = spawn(
      binary,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const prometheus = new Prometheus(child, `http://127.0.0.1:${port}`);
    await prometheus.until('Prometheus is ready', async () => {
      const response = await fetch(`${prometheus.url}/-/ready`).catch(() => null);
      return response?.status === 200;
    });
    return prometheus;
  }

  async query(expr: string): Promise<Sample[]> {
    const response = await fetch(`${this.url}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await response.json()) as { status: string; error?: string; data: { result: Sample[] } };
    if (body.status !== 'success') throw new Error(`${expr}: ${body.error}`);
    return body.data.result;
  }

  async firing(): Promise<string[]> {
    const response = await fetch(`${this.url}/api/v1/alerts`);
    const body = (await response.json()) as { data: { alerts: Alert[] } };
    return [...new Set(body.data.alerts.filter((a) => a.state === 'firing').map((a) => a.labels['alertname']))];
  }

  /** Waits until `done` holds (checked every 250 ms), failing after ALERT_WAIT_MS with what was seen. */
  async until(what: string, done: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + ALERT_WAIT_MS;
    while (!(await done())) {
      if (Date.now() > deadline) {
        const alerts = await this.firing().catch(() => []);
        throw new Error(`not within ${ALERT_WAIT_MS} ms: ${what}; firing: ${alerts.join(', ')}\n${this.output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  async untilFiring(alerts: string[]): Promise<void> {
    await this.until(`${alerts.join(', ')} firing`, async () => {
      const firing = await this.firing();
      return alerts.every((alert) => firing.includes(alert));
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

function hostAndPort(url: string, defaultPort: number): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname || '127.0.0.1', port: Number(parsed.port || defaultPort) };
}

(skip ? describe.skip : describe)('a real Prometheus scraping the built service (deploy/prometheus)', () => {
  let dir: string;
  let admin: Client;
  let databaseName: string;
  let databaseProxy: TcpProxy;
  let redisProxy: TcpProxy;
  let api: ApiProcess;
  let prometheus: Prometheus;
  let traffic: { stop(): Promise<void> } | null = null;

  /** A request a second-tenth on the API's read paths, one at a time, until stopped; its answers do not matter. */
  function steadyTraffic(): { stop(): Promise<void> } {
    let running = true;
    const paths = ['/pets', '/categories', '/store/inventory', '/no/such/route'];
    const loop = (async () => {
      for (let i = 0; running; i++) {
        await fetch(api.baseUrl + paths[i % paths.length], {
          headers: { authorization: `Bearer ${ADMIN_KEY}` },
          signal: AbortSignal.timeout(5000),
        }).then(
          (response) => response.arrayBuffer(),
          () => undefined,
        );
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    return {
      async stop() {
        running = false;
        await loop;
      },
    };
  }

  /** `count` requests at once: over the admission limit of 1 in flight, most are refused 503 overloaded. */
  async function burst(count: number): Promise<number[]> {
    const answers = await Promise.all(
      Array.from({ length: count }, () =>
        fetch(`${api.baseUrl}/pets`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } }).then(async (r) => {
          await r.arrayBuffer();
          return r.status;
        }),
      ),
    );
    return answers;
  }

  beforeAll(async () => {
    ensureBuilt();
    dir = await mkdtemp(join(tmpdir(), 'petstore-prometheus-'));
    const serverUrl = process.env[TEST_DATABASE_ENV.serverUrl];
    if (!serverUrl) throw new Error('no test database server (libs/testing global setup)');
    databaseName = `${TEST_DATABASE_PREFIX}prometheus_${process.env[TEST_DATABASE_ENV.runId]}`;
    admin = new Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
    await createMigratedDatabase(admin, databaseName);
    const databaseUrl = withDatabaseName(serverUrl, databaseName);

    databaseProxy = await TcpProxy.start(hostAndPort(databaseUrl, 5432));
    redisProxy = await TcpProxy.start(hostAndPort(redisUrl, 6379));
    const proxied = (url: string, port: number) => {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    };
    const metricsPort = await freePort();
    api = await ApiProcess.start({
      DATABASE_URL: proxied(databaseUrl, databaseProxy.port),
      // The primary itself, directly: it answers, but as no standby, so the service keeps it out of the reads.
      DATABASE_REPLICA_URLS: databaseUrl,
      REDIS_URL: proxied(redisUrl, redisProxy.port),
      REDIS_KEY_PREFIX: `petstore-prometheus-${process.pid}:`,
      METRICS_PORT: String(metricsPort),
      ADMIN_API_KEY: ADMIN_KEY,
      // One request in flight and no queue: a burst of concurrent requests is shed (admission_shed_total).
      ADMISSION: 'on',
      ADMISSION_LIMIT_MIN: '1',
      ADMISSION_LIMIT_MAX: '1',
      ADMISSION_QUEUE_MS: '0',
      ADMISSION_LOOP_DELAY_MS: '0',
      RATE_LIMIT_PER_MINUTE: '0',
      MESSAGE_WORKER: 'true',
      LOG_LEVEL: 'error',
    });
    prometheus = await Prometheus.start(PROMETHEUS, dir, `127.0.0.1:${metricsPort}`);
    await prometheus.until(
      'a first scrape of the service',
      async () => (await prometheus.query('build_info')).length > 0,
    );
  });

  afterAll(async () => {
    await traffic?.stop();
    await prometheus?.stop();
    await api?.stop();
    await databaseProxy?.close();
    await redisProxy?.close();
    if (admin) {
      await admin.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
      await admin.end();
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('fires the alerts of what happens, none before it; every rule and dashboard expression has data', async () => {
    // 1. Traffic, and bursts over the admission limit (two at least, scrapes apart: a counter's first sample is
    //    its start, so its rate needs a second one).
    traffic = steadyTraffic();
    const shed: number[] = [];
    for (let i = 0; i < 3; i++) {
      shed.push(...(await burst(30)).filter((status) => status === 503));
      await new Promise((resolve) => setTimeout(resolve, 1500));
    }
    expect(shed.length).toBeGreaterThan(10);
    await prometheus.untilFiring(['PetstoreAdmissionShedding', 'PetstoreReplicaOut']);
    let firing = await prometheus.firing();
    expect(firing).not.toContain('PetstoreDatabaseUnreachable');
    expect(firing).not.toContain('PetstoreRedisDown');
    expect((await prometheus.query('db_up == 1')).length).toBe(1);

    // 2. PostgreSQL refuses connections: db_up 0; the API's requests answer 503, which burns the error budget.
    await databaseProxy.close();
    await prometheus.untilFiring(['PetstoreDatabaseUnreachable', 'PetstoreApiErrorBudgetBurnFast']);
    firing = await prometheus.firing();
    expect(firing).not.toContain('PetstoreRedisDown');
    // The scrape went on answering through the outage (a failing gauge keeps its last value, never fails it).
    expect((await prometheus.query('up == 1')).length).toBe(1);

    // 3. PostgreSQL back: the alert resolves by itself.
    await databaseProxy.open();
    await prometheus.until('PetstoreDatabaseUnreachable resolved', async () => {
      return !(await prometheus.firing()).includes('PetstoreDatabaseUnreachable');
    });

    // 4. Redis down: redis_up 0; requests are still served (rate limits fail open).
    await redisProxy.close();
    await prometheus.untilFiring(['PetstoreRedisDown']);
    expect((await prometheus.firing()).includes('PetstoreDatabaseUnreachable')).toBe(false);
    const served = await fetch(`${api.baseUrl}/categories`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(served.status).toBe(200);
    await traffic.stop();
    traffic = null;

    // Every recording rule, every dashboard expression and every metric a rule names returns data.
    const empty: string[] = [];
    for (const { record } of recordingRules()) if (!(await prometheus.query(record)).length) empty.push(record);
    for (const { panel, expr } of dashboardExpressions()) {
      if (!(await prometheus.query(expr)).length) empty.push(`${panel}: ${expr}`);
    }
    const named = new Set(alertingRules().flatMap((rule) => metricNames(rule.expr)));
    for (const { expr } of recordingRules()) for (const name of metricNames(expr)) named.add(name);
    for (const name of named) if (!(await prometheus.query(`count(${name})`)).length) empty.push(name);
    expect(empty).toEqual([]);
  });
});
