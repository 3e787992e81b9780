/**
 * Every setting of the service, declared once (variable, type and range, default, one line of doc) and
 * grouped by concern. The loader (app-config.ts) reads the environment through it, and the configuration
 * table of docs/operations.md is generated from it (`npm run docs`).
 */
import { EVENT_TYPES } from '@petstore/domain';
import { z } from 'zod';
import {
  boolean,
  dateTime,
  fromFile,
  integer,
  integerList,
  Kind,
  milliseconds,
  oneOf,
  optional,
  secret,
  secretList,
  setting,
  Setting,
  text,
  url,
  urlList,
} from './setting';

export const LOG_LEVELS = ['error', 'warn', 'info', 'debug', 'verbose'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export const DEFAULT_PET_BY_ID_SUNSET = '2027-06-30T00:00:00Z';
export const ADMIN_API_KEY_MIN_LENGTH = 32;
/** The longest time bound any *_TIMEOUT_MS may take. */
const MAX_TIMEOUT_MS = 3_600_000;

/** false, true (any proxy), a hop count, or the proxies' addresses/CIDRs. */
export type TrustProxy = boolean | number | string[];

/** Named ranges proxy-addr (Fastify's trustProxy) knows. */
const PROXY_RANGES = ['loopback', 'linklocal', 'uniquelocal'] as const;

/** TRUST_PROXY as Fastify's trustProxy takes it; checked so that a typo stops start-up instead of trusting nobody. */
function trustProxy(): Kind<TrustProxy> {
  const entry = z.union([z.ipv4(), z.ipv6(), z.cidrv4(), z.cidrv6(), z.enum(PROXY_RANGES)]);
  return {
    type: `\`true\`, \`false\`, a hop count 1–100, or addresses, CIDRs, ${PROXY_RANGES.join('/')}, comma-separated`,
    problem: `must be true, false, a hop count, or a list of addresses, CIDRs or ${PROXY_RANGES.join('/')}`,
    schema: z.union([
      z.stringbool({ truthy: ['true'], falsy: ['false'] }),
      integer(1, 100).schema,
      z
        .string()
        .transform((value) => value.split(',').map((item) => item.trim()))
        .pipe(z.array(entry)),
    ]),
  };
}

/** `*`, or origins (`https://shop.example`: a scheme, a host, maybe a port, no path) separated by commas. */
function corsOrigins(): Kind<'*' | string[]> {
  const origin = z
    .string()
    .trim()
    .pipe(z.url({ protocol: /^https?$/ }))
    .refine((value) => URL.canParse(value) && new URL(value).origin === value);
  return {
    type: '`*` or origins, comma-separated',
    problem: 'must be * or comma-separated origins such as https://shop.example',
    schema: z.union([
      z.literal('*'),
      z
        .string()
        .transform((value) => value.split(','))
        .pipe(z.array(origin)),
    ]),
  };
}

/** A Redis key prefix: 1–100 letters, digits and `:._-` (no spaces, nor glob characters that KEYS would read). */
function redisKeyPrefix(): Kind<string> {
  return {
    type: 'text, 1–100 of `A–Z a–z 0–9 : . _ -`',
    problem: 'must be 1 to 100 letters, digits or : . _ -',
    schema: z.string().regex(/^[A-Za-z0-9:._-]{1,100}$/),
  };
}

function group<S extends Record<string, Setting<unknown>>>(title: string, settings: S) {
  return { title, settings };
}

export const CONFIG_SCHEMA = {
  http: group('HTTP', {
    port: setting('PORT', integer(0, 65535), '3000', 'HTTP port'),
    host: setting('HOST', text(), '0.0.0.0', 'interface to listen on'),
    // Node's default is 511: at twice capacity over 1,000 connections the bench measured 1,738 connections dropped
    // by the kernel (ListenOverflows) while the event loop was busy, each retried by its client after 1 s, 3 s or 7 s:
    // the refusals' and the liveness probe's p99 in seconds. The kernel caps it at net.core.somaxconn.
    listenBacklog: setting(
      'HTTP_LISTEN_BACKLOG',
      integer(1, 65535),
      '4096',
      'connections the kernel holds for the instance to accept (capped by `net.core.somaxconn`)',
    ),
    trustProxy: setting('TRUST_PROXY', trustProxy(), 'false', "which proxies' `X-Forwarded-For` names the client"),
    corsOrigins: optional(
      'CORS_ORIGINS',
      corsOrigins(),
      'browser origins allowed to call the API: unset = none (no CORS header at all); `*` = any origin may read ' +
        '(GET/HEAD, no API key, no credentials); `https://a.example,https://b.example` = those origins may use every ' +
        'method with `Authorization` and `Idempotency-Key`. Preflights are answered; `X-Request-Id`, `Link`, ' +
        '`RateLimit*`, `Retry-After`, `Deprecation`, `Sunset`, `Idempotent-Replayed` are exposed',
      [] as string[],
    ),
    connectionTimeoutMs: setting(
      'HTTP_CONNECTION_TIMEOUT_MS',
      milliseconds(100, MAX_TIMEOUT_MS),
      '60000',
      'a socket idle this long is closed',
    ),
    requestTimeoutMs: setting(
      'HTTP_REQUEST_TIMEOUT_MS',
      milliseconds(100, MAX_TIMEOUT_MS),
      '30000',
      'a whole request (headers and body) must arrive within this',
    ),
    headersTimeoutMs: setting(
      'HTTP_HEADERS_TIMEOUT_MS',
      milliseconds(100, MAX_TIMEOUT_MS),
      '10000',
      'the headers must arrive within this (at most `HTTP_REQUEST_TIMEOUT_MS`)',
    ),
    handlerTimeoutMs: setting(
      'HTTP_HANDLER_TIMEOUT_MS',
      milliseconds(100, MAX_TIMEOUT_MS),
      '30000',
      'a handler that has not answered by then gets 503 (408 while the request body is still arriving)',
    ),
    // The slow-upload rule (docs/operations.md, "Slow uploads"): Apache mod_reqtimeout's `body=5,MinRate=500`.
    bodyTimeoutMs: setting(
      'HTTP_BODY_TIMEOUT_MS',
      milliseconds(100, MAX_TIMEOUT_MS),
      '5000',
      'a request body gets this long, plus 1 s for every `HTTP_BODY_MIN_RATE` bytes received, before a 408',
    ),
    bodyMinRate: setting(
      'HTTP_BODY_MIN_RATE',
      integer(0, 1_000_000_000),
      '500',
      'the least rate (bytes a second, on average) a request body must arrive at once its first ' +
        '`HTTP_BODY_TIMEOUT_MS` have passed; 0 = only `HTTP_REQUEST_TIMEOUT_MS` bounds it',
    ),
  }),
  admission: group('Admission', {
    mode: setting(
      'ADMISSION',
      oneOf(['on', 'off'] as const),
      // On (issue 48): off, twice capacity gave a minute's tail to everyone; on, at normal load a request costs a
      // comparison, a counter and a timestamp (docs/operations.md, "Admission": why the defaults are what they are).
      'on',
      '`on`: an adaptive concurrency limit per instance; what it cannot admit, nor queue for `ADMISSION_QUEUE_MS`, ' +
        'gets 503 `overloaded` at once (health probes, `/metrics`, `/openapi.json` and `/docs` never); `off`: every ' +
        'request is admitted (see Admission)',
    ),
    limitMin: setting(
      'ADMISSION_LIMIT_MIN',
      integer(1, 100_000),
      '64',
      'the least (and first) limit of requests in flight the latency gradient sets; only ' +
        '`ADMISSION_LOOP_DELAY_MS` takes it lower, while the instance is refusing',
    ),
    limitMax: setting(
      'ADMISSION_LIMIT_MAX',
      integer(1, 100_000),
      '1000',
      'the most requests in flight the limit may grow to (at least `ADMISSION_LIMIT_MIN`)',
    ),
    queueMs: setting(
      'ADMISSION_QUEUE_MS',
      milliseconds(0, 10_000),
      '50',
      'how long a request over the limit may wait for a slot (first come, first served) before its 503 ' +
        '`overloaded`; 0 = no queue',
    ),
    loopDelayMs: setting(
      'ADMISSION_LOOP_DELAY_MS',
      milliseconds(0, 1_000),
      '10',
      'while requests are refused or queued, an event-loop delay above this (ms, each 100 ms) lowers the limit, ' +
        'below `ADMISSION_LIMIT_MIN` if need be, until the loop keeps up; 0 = latency alone sets the limit',
    ),
  }),
  database: group('Database', {
    url: fromFile(
      optional(
        'DATABASE_URL',
        url('postgres', 'postgresql'),
        'PostgreSQL URL; unset = embedded PostgreSQL with its data in `DATA_DIR` (refused under `NODE_ENV=production`)',
      ),
    ),
    directUrl: fromFile(
      optional(
        'DATABASE_DIRECT_URL',
        url('postgres', 'postgresql'),
        'a direct (session) connection when `DATABASE_URL` is a transaction pooler: migrations, locks, LISTEN',
      ),
    ),
    replicaUrls: fromFile(
      optional(
        'DATABASE_REPLICA_URLS',
        urlList(8, 'postgres', 'postgresql'),
        'hot standbys (streaming replicas) of `DATABASE_URL`, comma-separated: the catalogue, inventory, order, ' +
          "event, message and webhook GETs read from one that is caught up with the reader's own writes and within " +
          '`DATABASE_REPLICA_MAX_LAG_MS`, else from the primary (see Read replicas); unset = every read on the primary',
        [] as string[],
      ),
    ),
    replicaMaxLagMs: setting(
      'DATABASE_REPLICA_MAX_LAG_MS',
      milliseconds(250, 60_000),
      '1000',
      'a replica further behind the primary than this (its replay position polled every 200 ms) serves no read ' +
        'until it has caught up',
    ),
    dataDir: setting(
      'DATA_DIR',
      text(),
      '.data',
      'where the embedded PostgreSQL keeps its data (run as root, the `postgres` user must be able to enter it)',
    ),
    acquireTimeoutMs: setting(
      'DB_ACQUIRE_TIMEOUT_MS',
      milliseconds(100, MAX_TIMEOUT_MS),
      '5000',
      'wait for a pooled connection before 503 `service_unavailable`',
    ),
    statementTimeoutMs: setting(
      'DB_STATEMENT_TIMEOUT_MS',
      milliseconds(100, MAX_TIMEOUT_MS),
      '5000',
      'PostgreSQL `statement_timeout` of every pooled connection',
    ),
    idleInTransactionTimeoutMs: setting(
      'DB_IDLE_IN_TRANSACTION_TIMEOUT_MS',
      milliseconds(100, MAX_TIMEOUT_MS),
      '10000',
      'PostgreSQL `idle_in_transaction_session_timeout`',
    ),
    queryTimeoutMs: setting(
      'DB_QUERY_TIMEOUT_MS',
      milliseconds(100, MAX_TIMEOUT_MS),
      '6000',
      'client-side bound of one query (`pg` `query_timeout`): a database that stops answering gives 503',
    ),
    migrationLockTimeoutMs: setting(
      'MIGRATION_LOCK_TIMEOUT_MS',
      milliseconds(10, MAX_TIMEOUT_MS),
      '3000',
      'how long a migration statement may wait for a lock (`lock_timeout`), and so hold up requests queued ' +
        'behind it; then it is rolled back and tried again',
    ),
    migrationStatementTimeoutMs: setting(
      'MIGRATION_STATEMENT_TIMEOUT_MS',
      milliseconds(1000, 86_400_000),
      '3600000',
      'PostgreSQL `statement_timeout` of each migration statement (not `DB_STATEMENT_TIMEOUT_MS`, which is for ' +
        'requests): a backfill of millions of rows needs minutes',
    ),
    migrationAttempts: setting(
      'MIGRATION_ATTEMPTS',
      integer(1, 50),
      '5',
      'tries of a migration that met a lock timeout or a deadlock (jittered, doubling pauses from 0.5 s)',
    ),
  }),
  auth: group('Authentication and limits', {
    adminApiKey: fromFile(
      optional(
        'ADMIN_API_KEY',
        secret(ADMIN_API_KEY_MIN_LENGTH),
        'bootstrap administrator key (`openssl rand -hex 24`); idempotent; a new one revokes the previous',
      ),
    ),
    idempotencyKeyPeppers: fromFile(
      optional(
        'IDEMPOTENCY_KEY_PEPPER',
        secretList(ADMIN_API_KEY_MIN_LENGTH, 3),
        'Idempotency-Keys are kept as their HMAC under the first (and results showing a secret sealed with it), ' +
          'so a copy of the database cannot test guessed keys; older values, after it, still find and open the ' +
          'records of the last 24 hours. Unset = plain SHA-256 (see Security and limits)',
        [] as string[],
      ),
    ),
    apiKeyCacheSeconds: setting(
      'API_KEY_CACHE_SECONDS',
      integer(0, 300),
      '5',
      'seconds a verified API key is trusted without a database lookup (0 = no cache); a revocation still ' +
        'reaches every instance within a second (PostgreSQL `LISTEN`/`NOTIFY`)',
    ),
    rateLimitPerMinute: setting(
      'RATE_LIMIT_PER_MINUTE',
      integer(0, 1_000_000),
      '600',
      'requests a minute per account (per client address without a valid key); 0 = every limit off',
    ),
    signupLimitPerHour: setting(
      'SIGNUP_LIMIT_PER_HOUR',
      integer(1, 1_000_000),
      '20',
      'sign-ups an hour per client address',
    ),
    authFailureLimitPerMinute: setting(
      'AUTH_FAILURE_LIMIT_PER_MINUTE',
      integer(1, 1_000_000),
      '20',
      'failed authentications a minute per client address',
    ),
    redisUrl: fromFile(
      optional(
        'REDIS_URL',
        url('redis', 'rediss'),
        "share rate-limit counters (and, with `DATABASE_REPLICA_URLS`, each account's last write position) between " +
          'instances; unset = per process',
      ),
    ),
    redisKeyPrefix: setting(
      'REDIS_KEY_PREFIX',
      redisKeyPrefix(),
      'petstore:',
      'the start of every key the service writes in Redis (`<it>ratelimit:…`): deployments sharing one Redis ' +
        'need different prefixes, or they share their rate-limit counters',
    ),
  }),
  deprecations: group('Deprecations', {
    petByIdSunset: setting(
      'PET_BY_ID_SUNSET',
      dateTime(DEFAULT_PET_BY_ID_SUNSET),
      DEFAULT_PET_BY_ID_SUNSET,
      'sunset of the deprecated `GET /pets/{petId}`',
    ),
  }),
  ordering: group('Ordering', {
    maxOpenUnitsPerCustomer: setting(
      'MAX_OPEN_UNITS_PER_CUSTOMER',
      integer(0, 1_000_000_000),
      '100',
      'units a customer may hold in open orders (admins exempt); 0 = off',
    ),
    orderHoldMinutes: setting(
      'ORDER_HOLD_MINUTES',
      integer(1, 525_600),
      '1440',
      'an order open this long after it was placed is cancelled by the service',
    ),
  }),
  catalogueCache: group('Catalogue cache', {
    mode: setting(
      'CATALOGUE_CACHE',
      oneOf(['on', 'off'] as const),
      'on',
      "`on`: each instance keeps the catalogue's GET answers (categories, pets, stock) in memory, dropped on every " +
        'change on any instance (see Catalogue cache); `off`: every read asks the database',
    ),
    // Sized for the compose file's 1,536 MB container: a page of 20 pets is about 3 KB, so 32 MiB holds some 10,000
    // pages, and the process stays well under its heap ceiling (docs/operations.md, "Catalogue cache": sizing).
    maxEntries: setting(
      'CATALOGUE_CACHE_MAX_ENTRIES',
      integer(1, 10_000_000),
      '20000',
      'the most answers kept per instance (least recently used dropped first)',
    ),
    maxBytes: setting(
      'CATALOGUE_CACHE_MAX_BYTES',
      integer(1024, 64 * 1024 ** 3),
      String(32 * 1024 ** 2),
      "the most bytes of answers kept per instance (bodies, headers and an estimate of each entry's bookkeeping)",
    ),
    maxAgeMs: setting(
      'CATALOGUE_CACHE_MAX_AGE_MS',
      milliseconds(1, 3_600_000),
      '5000',
      'no answer older than this is served, whatever the change signals said (the bound of a lost signal); an ' +
        "account's reads bypass the cache for this long after its writes",
    ),
    stalenessBoundMs: setting(
      'CATALOGUE_CACHE_STALENESS_BOUND_MS',
      milliseconds(10, 60_000),
      '100',
      'answers are served only while every change committed longer ago than this has been heard of (a heartbeat ' +
        'every quarter of it); else reads ask the database',
    ),
  }),
  messaging: group('Messaging and workers', {
    worker: setting(
      'MESSAGE_WORKER',
      boolean(),
      'true',
      'run the message and webhook workers and the scheduled jobs inside the API process',
    ),
    maxAttempts: setting(
      'MESSAGE_MAX_ATTEMPTS',
      integer(1, 100),
      '10',
      'delivery attempts before a message is `failed`',
    ),
  }),
  events: group('Events', {
    retentionDays: setting(
      'EVENT_RETENTION_DAYS',
      integer(1, 3650),
      '30',
      "days an event stays in `GET /events` (and its deliveries in the endpoints' lists); a scheduled job " +
        'deletes older ones every hour, 10,000 a statement, resting after each as long as it took',
    ),
  }),
  webhooks: group('Webhooks', {
    delivery: setting(
      'WEBHOOKS_DELIVERY',
      oneOf(['on', 'off'] as const),
      'on',
      '`off`: this process sends nothing to any webhook endpoint (deliveries stay queued, their count in the ' +
        'start-up warning) and answers a ping, a redelivery or a recovery 409 `webhook_delivery_off`: for a ' +
        'restored copy ' +
        "of the database, which must not call the customers' URLs (set it on every process of the copy)",
    ),
    allowPrivate: setting(
      'WEBHOOKS_ALLOW_PRIVATE',
      boolean(),
      'false',
      '**unsafe**, development and tests only: webhook URLs may be `http://` and reach private, loopback and ' +
        'link-local addresses (the port rule stays: 443 or 1024-65535; `http://` without a port is 80, refused)',
    ),
    secretRotationWindowSeconds: setting(
      'WEBHOOK_SECRET_ROTATION_WINDOW_SECONDS',
      integer(0, 604_800),
      '86400',
      'how long a rotated-out webhook secret still signs deliveries beside the new one (seconds, at most 7 days); ' +
        'a rotation may ask for less, never more',
    ),
    deliveriesPerMinute: setting(
      'WEBHOOK_DELIVERIES_PER_MINUTE',
      integer(0, 1_000_000),
      '6000',
      "each account's outbound budget for the deliveries fanned out to its endpoints, a minute on average with a " +
        "burst of a minute's worth, shared by every worker: beyond it the account's deliveries start later, none " +
        'is dropped (pings and redeliveries have their own budget); 0 = no budget',
    ),
    workerConcurrency: setting(
      'WEBHOOK_WORKER_CONCURRENCY',
      integer(1, 1000),
      '100',
      'webhook attempts a worker process makes at once (each a request waiting for its receiver, and a database ' +
        'connection for a moment before and after); fan-outs run a tenth as many',
    ),
    endpointConcurrency: setting(
      'WEBHOOK_ENDPOINT_CONCURRENCY',
      integer(1, 100),
      '4',
      'attempts a worker process makes at once to one endpoint: a slow or failing receiver holds at most that many ' +
        "of the worker's slots, and its other deliveries wait their turn (put off by about two of its attempts)",
    ),
    retryDelaysMs: optional(
      'WEBHOOK_RETRY_DELAYS_MS',
      integerList(100, 0, 86_400_000),
      'for tests: the waits between webhook attempts in milliseconds (`100,100,100`); unset = the standard schedule',
    ),
  }),
  eventStream: group('Event stream (NATS JetStream)', {
    natsUrl: fromFile(
      optional(
        'EVENTS_NATS_URL',
        url('nats', 'tls'),
        'a NATS server with JetStream (`nats://user:password@host:4222`; a user alone is a token): a process with ' +
          'the worker role relays every event there, in commit order, once each (see Event stream); unset = off',
      ),
    ),
    natsStream: setting(
      'EVENTS_NATS_STREAM',
      {
        // NATS refuses `.`, `*`, `>` and spaces in a stream's name.
        type: 'text, 1–100 of `A–Z a–z 0–9 _ -`',
        problem: 'must be 1 to 100 letters, digits, _ or -',
        schema: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/),
      },
      'PETSTORE_EVENTS',
      'the JetStream stream the events go to: created (file storage, subjects `<prefix>.>`) if missing',
    ),
    natsSubjectPrefix: setting(
      'EVENTS_NATS_SUBJECT_PREFIX',
      {
        type: 'dot-separated tokens of `A–Z a–z 0–9 _ -`, at most 100 characters',
        problem: 'must be dot-separated tokens of letters, digits, _ or - (no wildcards), at most 100 characters',
        schema: z
          .string()
          .max(100)
          .regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/),
      },
      'petstore.events',
      `each event's subject is \`<prefix>.<event type>\` (\`petstore.events.${EVENT_TYPES[0]}\`)`,
    ),
  }),
  observability: group('Observability', {
    logLevel: setting('LOG_LEVEL', oneOf(LOG_LEVELS), 'info', 'the least severe level logged'),
    logFormat: setting(
      'LOG_FORMAT',
      oneOf(LOG_FORMATS),
      'json',
      '`json`: one JSON object a line; `pretty`: coloured lines for people (`nx serve api` sets it in ' +
        '`apps/api/serve.env`)',
    ),
    metricsPort: optional(
      'METRICS_PORT',
      integer(1, 65535),
      'serve `GET /metrics` on this port without auth (and not on `PORT`); unset = on `PORT`, administrator key only',
    ),
    otlpEndpoint: fromFile(
      optional(
        'OTEL_EXPORTER_OTLP_ENDPOINT',
        url('http', 'https'),
        'OTLP/HTTP collector (`http://collector:4318`): export OpenTelemetry traces to `<it>/v1/traces`; ' +
          'unset = no tracing code loaded',
      ),
    ),
  }),
  process: group('Process', {
    shutdownTimeoutMs: setting(
      'SHUTDOWN_TIMEOUT_MS',
      integer(0, 600_000),
      '10000',
      'the process exits within this from SIGTERM/SIGINT: the drain gets all but a closing share (a quarter, ' +
        'at most 2 s), then it stops',
    ),
    nodeEnv: optional(
      'NODE_ENV',
      text(),
      "`production` (the image's; not `npm start`'s) refuses the embedded PostgreSQL",
    ),
  }),
};
