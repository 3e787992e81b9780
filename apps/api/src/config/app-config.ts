/**
 * The service's configuration: the only place that reads process.env.
 * Invalid values stop start-up with one line naming the variable.
 */
import { isIP } from 'node:net';

export const LOG_LEVELS = ['error', 'warn', 'info', 'debug', 'verbose'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export class AppConfig {
  /** HTTP port (PORT, 3000). */
  port: number;
  /** Interface to listen on (HOST, 0.0.0.0). */
  host: string;
  /** PostgreSQL URL (DATABASE_URL); null = an embedded PostgreSQL in dataDir. */
  databaseUrl: string | null;
  /** Where the embedded PostgreSQL keeps its data (DATA_DIR, .data). */
  dataDir: string;
  /** Bootstrap administrator key (ADMIN_API_KEY), at least 32 characters. */
  adminApiKey: string | null;
  /** Requests a minute per account, else per client address (RATE_LIMIT_PER_MINUTE, 600; 0 = every limit off). */
  rateLimitPerMinute: number;
  /** Sign-ups an hour per client address (SIGNUP_LIMIT_PER_HOUR, 20); off with rateLimitPerMinute 0. */
  signupLimitPerHour: number;
  /** Failed authentications a minute per client address (AUTH_FAILURE_LIMIT_PER_MINUTE, 20); off likewise. */
  authFailureLimitPerMinute: number;
  /** Seconds a verified API key is trusted without a database lookup (API_KEY_CACHE_SECONDS, 5; 0 = no cache). */
  apiKeyCacheSeconds: number;
  /** Fastify's trustProxy (TRUST_PROXY, false): which proxies' X-Forwarded-For gives the client address. */
  trustProxy: TrustProxy;
  /** Redis for rate-limit counters shared by instances (REDIS_URL); null = in process. */
  redisUrl: string | null;
  /** When GET /pets/{petId} stops answering (PET_BY_ID_SUNSET). */
  petByIdSunset: Date;
  /** LOG_LEVEL, info. */
  logLevel: LogLevelName;
  /** LOG_FORMAT: one JSON object a line (json, the default) or coloured lines for people (pretty). */
  logFormat: LogFormat;
  /** Whether the message worker runs in this process (MESSAGE_WORKER, on). */
  messageWorker: boolean;
  /** Delivery attempts before a message is given up as `failed` (MESSAGE_MAX_ATTEMPTS, 10). */
  messageMaxAttempts: number;
  /** METRICS_PORT: serve GET /metrics there, without auth, instead of on PORT for the administrator; null = PORT. */
  metricsPort: number | null;
  /** OTEL_EXPORTER_OTLP_ENDPOINT: export OpenTelemetry traces there (OTLP over HTTP); null = no tracing. */
  otlpEndpoint: string | null;
  /** Time bounds of HTTP exchanges and database work (HTTP_* and DB_* *_MS variables), in milliseconds. */
  timeouts: Timeouts;
  /** WEBHOOKS_ALLOW_PRIVATE (false): webhooks may use http:// and private, loopback, link-local addresses (unsafe). */
  webhooksAllowPrivate: boolean;
  /** WEBHOOK_RETRY_DELAYS_MS (for tests): the waits between webhook attempts; null = the standard schedule. */
  webhookRetryDelaysMs: number[] | null;
  /** How long a SIGTERM/SIGINT may take to drain in-flight requests and stop (SHUTDOWN_TIMEOUT_MS, 10000). */
  shutdownTimeoutMs: number;
  /** Units a customer may hold in open orders (MAX_OPEN_UNITS_PER_CUSTOMER, 100; 0 = no limit); admins exempt. */
  maxOpenUnitsPerCustomer: number;
  /** An order open this many minutes after it was placed is cancelled by the service (ORDER_HOLD_MINUTES, 1440). */
  orderHoldMinutes: number;
  /** CORS_ORIGINS: '*' (any origin may read) or the origins that may call the API from a browser; [] = none. */
  corsOrigins: '*' | string[];

  constructor(values: AppConfig) {
    Object.assign(this, values);
  }
}

/** false, true (any proxy), a hop count, or the proxies' addresses/CIDRs. */
export type TrustProxy = boolean | number | string[];

export interface Timeouts {
  /** A connection with no traffic this long is closed (HTTP_CONNECTION_TIMEOUT_MS, 60000). */
  httpConnectionMs: number;
  /** The whole request (headers and body) must arrive within (HTTP_REQUEST_TIMEOUT_MS, 30000). */
  httpRequestMs: number;
  /** The request headers must arrive within (HTTP_HEADERS_TIMEOUT_MS, 10000); at most HTTP_REQUEST_TIMEOUT_MS. */
  httpHeadersMs: number;
  /** A request not answered within this gets 503 (HTTP_HANDLER_TIMEOUT_MS, 30000). */
  httpHandlerMs: number;
  /** Waiting for a pooled database connection (DB_ACQUIRE_TIMEOUT_MS, 5000). */
  dbAcquireMs: number;
  /** PostgreSQL statement_timeout of every pooled session (DB_STATEMENT_TIMEOUT_MS, 5000). */
  dbStatementMs: number;
  /** PostgreSQL idle_in_transaction_session_timeout (DB_IDLE_IN_TRANSACTION_TIMEOUT_MS, 10000). */
  dbIdleInTransactionMs: number;
  /** Client-side bound on one statement's answer, pg query_timeout (DB_QUERY_TIMEOUT_MS, 6000). */
  dbQueryMs: number;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`Invalid configuration: ${variable} ${problem}`);
  }
}

type Env = Record<string, string | undefined>;

export const DEFAULT_PET_BY_ID_SUNSET = '2027-06-30T00:00:00Z';
export const ADMIN_API_KEY_MIN_LENGTH = 32;

export function loadConfig(env: Env = process.env): AppConfig {
  return new AppConfig({
    port: integer(env, 'PORT', 3000, 0, 65535),
    host: text(env, 'HOST') ?? '0.0.0.0',
    databaseUrl: requiredInProduction(env, 'DATABASE_URL', databaseUrl(env, 'DATABASE_URL')),
    dataDir: text(env, 'DATA_DIR') ?? '.data',
    adminApiKey: adminKey(env, 'ADMIN_API_KEY'),
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 600, 0, 1_000_000),
    signupLimitPerHour: integer(env, 'SIGNUP_LIMIT_PER_HOUR', 20, 1, 1_000_000),
    authFailureLimitPerMinute: integer(env, 'AUTH_FAILURE_LIMIT_PER_MINUTE', 20, 1, 1_000_000),
    apiKeyCacheSeconds: integer(env, 'API_KEY_CACHE_SECONDS', 5, 0, 300),
    trustProxy: trustProxy(env, 'TRUST_PROXY'),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    petByIdSunset: date(env, 'PET_BY_ID_SUNSET', DEFAULT_PET_BY_ID_SUNSET),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    logFormat: oneOf(env, 'LOG_FORMAT', LOG_FORMATS, 'json'),
    messageWorker: boolean(env, 'MESSAGE_WORKER', true),
    messageMaxAttempts: integer(env, 'MESSAGE_MAX_ATTEMPTS', 10, 1, 100),
    metricsPort: text(env, 'METRICS_PORT') === null ? null : integer(env, 'METRICS_PORT', 0, 1, 65535),
    otlpEndpoint: url(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', ['http:', 'https:']),
    timeouts: timeouts(env),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    maxOpenUnitsPerCustomer: integer(env, 'MAX_OPEN_UNITS_PER_CUSTOMER', 100, 0, 1_000_000_000),
    orderHoldMinutes: integer(env, 'ORDER_HOLD_MINUTES', 1440, 1, 525_600),
    corsOrigins: origins(env, 'CORS_ORIGINS'),
    webhooksAllowPrivate: boolean(env, 'WEBHOOKS_ALLOW_PRIVATE', false),
    webhookRetryDelaysMs: integerList(env, 'WEBHOOK_RETRY_DELAYS_MS', 0, 100, 0, 86_400_000),
  });
}

const MAX_TIMEOUT_MS = 3_600_000;

function timeouts(env: Env): Timeouts {
  const ms = (name: string, fallback: number) => integer(env, name, fallback, 100, MAX_TIMEOUT_MS);
  const result: Timeouts = {
    httpConnectionMs: ms('HTTP_CONNECTION_TIMEOUT_MS', 60_000),
    httpRequestMs: ms('HTTP_REQUEST_TIMEOUT_MS', 30_000),
    httpHeadersMs: ms('HTTP_HEADERS_TIMEOUT_MS', 10_000),
    httpHandlerMs: ms('HTTP_HANDLER_TIMEOUT_MS', 30_000),
    dbAcquireMs: ms('DB_ACQUIRE_TIMEOUT_MS', 5000),
    dbStatementMs: ms('DB_STATEMENT_TIMEOUT_MS', 5000),
    dbIdleInTransactionMs: ms('DB_IDLE_IN_TRANSACTION_TIMEOUT_MS', 10_000),
    dbQueryMs: ms('DB_QUERY_TIMEOUT_MS', 6000),
  };
  // Node refuses a headers timeout longer than the request timeout.
  if (result.httpHeadersMs > result.httpRequestMs) {
    throw new ConfigError(
      'HTTP_HEADERS_TIMEOUT_MS',
      `must not exceed HTTP_REQUEST_TIMEOUT_MS (${result.httpRequestMs}).`,
    );
  }
  return result;
}

/**
 * NODE_ENV=production (the image sets it; `npm start` does not): the embedded PostgreSQL is a
 * development database, so a production service must be given its own.
 */
function requiredInProduction<T>(env: Env, name: string, value: T | null): T | null {
  if (value === null && text(env, 'NODE_ENV') === 'production') {
    throw new ConfigError(
      name,
      'must be set when NODE_ENV=production: the embedded PostgreSQL is for development only.',
    );
  }
  return value;
}

function text(env: Env, name: string): string | null {
  const value = env[name]?.trim();
  return value ? value : null;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = text(env, name);
  if (value === null) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new ConfigError(name, `must be a whole number from ${min} to ${max} (got "${value}").`);
  }
  return Number(value);
}

/** A comma-separated list of whole numbers (null when unset). */
function integerList(
  env: Env,
  name: string,
  minLength: number,
  maxLength: number,
  min: number,
  max: number,
): number[] | null {
  const value = text(env, name);
  if (value === null) return null;
  const items = value.split(',').map((item) => item.trim());
  const valid = items.every((item) => /^\d+$/.test(item) && Number(item) >= min && Number(item) <= max);
  if (!valid || items.length < minLength || items.length > maxLength) {
    const problem = `must be up to ${maxLength} comma-separated whole numbers from ${min} to ${max}`;
    throw new ConfigError(name, `${problem} (got "${value}").`);
  }
  return items.map(Number);
}

function url(env: Env, name: string, protocols: string[]): string | null {
  const value = text(env, name);
  if (value === null) return null;
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(name, 'must be a URL.');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must be a ${protocols.join(' or ')}// URL.`);
  }
  return value;
}

function databaseUrl(env: Env, name: string): string | null {
  return url(env, name, ['postgres:', 'postgresql:']);
}

function adminKey(env: Env, name: string): string | null {
  const value = text(env, name);
  if (value === null) return null;
  if (value.length < ADMIN_API_KEY_MIN_LENGTH || /\s/.test(value)) {
    throw new ConfigError(name, `must be at least ${ADMIN_API_KEY_MIN_LENGTH} characters without spaces.`);
  }
  return value;
}

/** Named ranges proxy-addr (Fastify's trustProxy) knows. */
const PROXY_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * TRUST_PROXY as Fastify's trustProxy takes it: true/false, a hop count, or a comma-separated list of
 * addresses, CIDRs and named ranges. Checked here (by hand: proxy-addr is only Fastify's dependency)
 * so that a typo stops start-up instead of silently trusting nobody.
 */
function trustProxy(env: Env, name: string): TrustProxy {
  const value = text(env, name);
  if (value === null || value.toLowerCase() === 'false') return false;
  if (value.toLowerCase() === 'true') return true;
  if (/^\d+$/.test(value)) return integer(env, name, 0, 1, 100);
  const entries = value.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const [address, bits, ...rest] = entry.split('/');
    const family = isIP(address);
    const maxBits = family === 6 ? 128 : 32;
    const valid =
      (PROXY_RANGES.includes(entry) && bits === undefined) ||
      (family !== 0 && rest.length === 0 && (bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= maxBits)));
    if (!valid) {
      const expected = `true, false, a hop count, or a list of addresses, CIDRs or ${PROXY_RANGES.join('/')}`;
      throw new ConfigError(name, `must be ${expected} (got "${entry}").`);
    }
  }
  return entries;
}

function date(env: Env, name: string, fallback: string): Date {
  const value = text(env, name) ?? fallback;
  const parsed = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(parsed.getTime())) {
    throw new ConfigError(name, `must be an ISO 8601 date-time such as ${DEFAULT_PET_BY_ID_SUNSET} (got "${value}").`);
  }
  return parsed;
}

/** `*`, or origins (`https://shop.example`, no path) separated by commas. */
function origins(env: Env, name: string): '*' | string[] {
  const value = text(env, name);
  if (value === null) return [];
  if (value === '*') return '*';
  return value.split(',').map((entry) => {
    const origin = entry.trim();
    let parsed: URL | null = null;
    try {
      parsed = new URL(origin);
    } catch {
      // reported below
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== origin) {
      const problem = `must be * or comma-separated origins such as https://shop.example (got "${origin}").`;
      throw new ConfigError(name, problem);
    }
    return origin;
  });
}

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const value = text(env, name);
  if (value === null) return fallback;
  if (!(values as readonly string[]).includes(value)) {
    throw new ConfigError(name, `must be one of ${values.join(', ')} (got "${value}").`);
  }
  return value as T;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const value = text(env, name)?.toLowerCase();
  if (value === undefined || value === null) return fallback;
  if (['1', 'true', 'on', 'yes'].includes(value)) return true;
  if (['0', 'false', 'off', 'no'].includes(value)) return false;
  throw new ConfigError(name, `must be true or false (got "${value}").`);
}
