import { createServer, Server } from 'node:http';
import {
  DynamicModule,
  Global,
  Inject,
  Injectable,
  Logger,
  Module,
  OnApplicationBootstrap,
  OnApplicationShutdown,
  Optional,
} from '@nestjs/common';
import { DatabasePool, ReadReplicas } from '@petstore/infrastructure';
import { Counter, Gauge } from 'prom-client';
import { Metrics } from './metrics';
import { answersWithin, PROBE_TIMEOUT_MS } from './probe';
import { AppConfig, ConfigPart } from '../config/app-config';
import { InjectConfig } from '../config/config.module';
import { MetricsController } from './metrics.controller';

/**
 * Gauges of the connection pool: connections open, idle, queries waiting for one, and whether the database answers
 * (`db_up`). With DATABASE_REPLICA_URLS, the reads per server and each replica's state (none of these series exist
 * without replicas).
 */
@Injectable()
export class DatabasePoolMetrics {
  constructor(metrics: Metrics, @Inject(DatabasePool) pool: DatabasePool, @Optional() replicas?: ReadReplicas) {
    metrics.gauge('db_pool_connections_total', 'Connections the pool holds.', () => pool.totalCount);
    metrics.gauge('db_pool_connections_idle', 'Pool connections not in use.', () => pool.idleCount);
    metrics.gauge('db_pool_waiting_requests', 'Queries waiting for a pool connection.', () => pool.waitingCount);
    metrics.gauge(
      'db_up',
      `Whether PostgreSQL answers a SELECT 1 through the pool within ${PROBE_TIMEOUT_MS / 1000} s: 1 yes, 0 no.`,
      () => answersWithin(pool.query('SELECT 1')).then((up) => (up ? 1 : 0)),
    );
    if (replicas) replicaMetrics(metrics, replicas);
  }
}

/** Reads per target (`primary`, or a replica's `host:port/database`), and each replica's state and lag. */
function replicaMetrics(metrics: Metrics, replicas: ReadReplicas): void {
  const reads = new Counter({
    name: 'db_replica_routed_reads_total',
    help:
      'Statements outside a transaction in requests that may read from a replica, by the server that answered ' +
      '(`primary` or the replica): the primary when no replica has replayed far enough.',
    labelNames: ['target'] as const,
    registers: [metrics.registry],
  });
  for (const target of ['primary', ...replicas.replicas.map((replica) => replica.label)]) reads.inc({ target }, 0);
  replicas.onRead = (target) => reads.inc({ target });
  const timeouts = new Counter({
    name: 'db_replica_statement_timeouts_total',
    help:
      'Statements that timed out on a replica (their statement timeout, or no connection free in time), by replica ' +
      'and whether they were run again on the primary (`rerun`: `true`, or `false` once their client timed out too ' +
      'often this minute). The replica stays in: its polls judge its health.',
    labelNames: ['replica', 'rerun'] as const,
    registers: [metrics.registry],
  });
  replicas.onTimeout = (replica, rerun) => timeouts.inc({ replica, rerun: String(rerun) });
  const each = (name: string, help: string, value: (replica: ReadReplicas['replicas'][number]) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['replica'] as const,
      registers: [metrics.registry],
      collect() {
        for (const replica of replicas.replicas) this.set({ replica: replica.label }, value(replica));
      },
    });
  each('db_replica_in_use', 'Whether reads may go to the replica: 1 yes, 0 out (lagging or not answering).', (r) =>
    r.inUse ? 1 : 0,
  );
  each('db_replica_up', 'Whether the replica answered its last poll as a standby: 1 yes, 0 no.', (r) =>
    r.answers ? 1 : 0,
  );
  each(
    'db_replica_lag_seconds',
    'How far behind the primary the replica was at its last poll (+Inf: unknown or beyond what is kept).',
    (r) => r.stalenessMs / 1000,
  );
}

/**
 * With METRICS_PORT set, GET /metrics is served there without auth (a port for the scraper, kept
 * off the public network) and not on the API's port.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private server: Server | null = null;
  private readonly logger = new Logger('Metrics');

  constructor(
    private readonly metrics: Metrics,
    @InjectConfig('observability') private readonly observability: ConfigPart<'observability'>,
    @InjectConfig('http') private readonly http: ConfigPart<'http'>,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const port = this.observability.metricsPort;
    if (port === null) return;
    const server = createServer((request, response) => {
      if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
        response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Only GET /metrics here.\n');
        return;
      }
      this.metrics.text().then(
        (text) => response.writeHead(200, { 'content-type': this.metrics.contentType }).end(text),
        (error: Error) => response.writeHead(500, { 'content-type': 'text/plain' }).end(`${error.message}\n`),
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, this.http.host, () => resolve());
    });
    this.server = server;
    this.logger.log(`Metrics on http://${this.http.host}:${port}/metrics (no auth)`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/**
 * Prometheus metrics: one registry per process (global for that reason: every slice may add its gauges and
 * counters to it), GET /metrics on PORT or METRICS_PORT.
 */
@Global()
@Module({})
export class MetricsModule {
  /** `http`: whether the process serves the API (GET /metrics on its port unless METRICS_PORT is set). */
  static register(config: AppConfig, options: { http: boolean }): DynamicModule {
    return {
      module: MetricsModule,
      controllers: options.http && config.observability.metricsPort === null ? [MetricsController] : [],
      providers: [{ provide: Metrics, useFactory: () => new Metrics() }, DatabasePoolMetrics, MetricsServer],
      exports: [Metrics],
    };
  }
}
