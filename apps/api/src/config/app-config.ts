/**
 * The service's configuration: the only place that reads process.env.
 * Invalid values stop start-up with one line naming the variable.
 */
export const LOG_LEVELS = ['error', 'warn', 'info', 'debug', 'verbose'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

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
  /** Requests a key may make a minute (RATE_LIMIT_PER_MINUTE, 600; 0 = off). */
  rateLimitPerMinute: number;
  /** Redis for rate-limit counters shared by instances (REDIS_URL); null = in process. */
  redisUrl: string | null;
  /** When GET /pets/{petId} stops answering (PET_BY_ID_SUNSET). */
  petByIdSunset: Date;
  /** LOG_LEVEL, info. */
  logLevel: LogLevelName;
  /** Whether the message worker runs in this process (MESSAGE_WORKER, on). */
  messageWorker: boolean;
  /** How long a SIGTERM/SIGINT may take to drain in-flight requests and stop (SHUTDOWN_TIMEOUT_MS, 10000). */
  shutdownTimeoutMs: number;

  constructor(values: AppConfig) {
    Object.assign(this, values);
  }
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
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    petByIdSunset: date(env, 'PET_BY_ID_SUNSET', DEFAULT_PET_BY_ID_SUNSET),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    messageWorker: boolean(env, 'MESSAGE_WORKER', true),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
  });
}

/**
 * NODE_ENV=production (the image sets it; `npm start` does not): the embedded PostgreSQL is a
 * development database, so a production service must be given its own.
 */
function requiredInProduction<T>(env: Env, name: string, value: T | null): T | null {
  if (value === null && text(env, 'NODE_ENV') === 'production') {
    throw new ConfigError(name, 'must be set when NODE_ENV=production: the embedded PostgreSQL is for development only.');
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

function date(env: Env, name: string, fallback: string): Date {
  const value = text(env, name) ?? fallback;
  const parsed = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(parsed.getTime())) {
    throw new ConfigError(name, `must be an ISO 8601 date-time such as ${DEFAULT_PET_BY_ID_SUNSET} (got "${value}").`);
  }
  return parsed;
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
