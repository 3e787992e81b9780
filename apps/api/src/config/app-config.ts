/**
 * The service's configuration: the only place that reads the service's settings (the entry points hand it
 * `process.env`; docs/architecture.md says who else reads the environment). The settings are declared once in
 * schema.ts; this reads them, checks them with zod and hands out one frozen object, grouped as the schema
 * is (`config.http`, `config.database`…), so that each slice can be given its own typed part.
 * Invalid values stop start-up with one line naming the variable.
 *
 * Why zod, not @nestjs/config: the configuration is needed before Nest starts (tracing must load before
 * `http` and `pg`; the database is opened, and migrated, before the application is composed), and
 * @nestjs/config would still need a schema library to check types and ranges. zod gives the schema, the
 * checks (URLs, IP addresses and CIDRs, booleans, enums) and the TypeScript types in one declaration;
 * the typed parts reach the slices through ConfigModule (config.module.ts).
 */
import { readFileSync } from 'node:fs';
import { CONFIG_SCHEMA } from './schema';
import { Setting, ValueOf } from './setting';

export * from './schema';

type Schema = typeof CONFIG_SCHEMA;
export type ConfigGroup = keyof Schema;

/** The settings of one concern, as the loader hands them out. */
export type ConfigPart<G extends ConfigGroup> = {
  readonly [K in keyof Schema[G]['settings']]: ValueOf<Schema[G]['settings'][K]>;
};

type Parts = { readonly [G in ConfigGroup]: ConfigPart<G> };

/**
 * The whole configuration: one frozen part per concern. A class too, as the injection token of
 * ConfigModule (an interface merged into an abstract class: the type is the schema's, the token Nest's).
 */
/* eslint-disable @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type,
   @typescript-eslint/no-empty-interface -- the merge is the point: the schema's type on Nest's token */
export interface AppConfig extends Parts {}
export abstract class AppConfig {}
/* eslint-enable @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type,
   @typescript-eslint/no-empty-interface */

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`Invalid configuration: ${variable} ${problem}`);
  }
}

type Env = Record<string, string | undefined>;

/** Every setting of the schema with its group and name in it, in the schema's order. */
export function allSettings(): { group: ConfigGroup; title: string; key: string; setting: Setting<unknown> }[] {
  return Object.entries(CONFIG_SCHEMA).flatMap(([group, { title, settings }]) =>
    Object.entries(settings).map(([key, setting]) => ({ group: group as ConfigGroup, title, key, setting })),
  );
}

/**
 * A variable's text, trimmed; undefined when it is not in the environment. Set but empty (`PORT=`, or only white
 * space) is refused like any other invalid value (issue 50: `PORT=` silently took 3000): an empty value is as likely
 * a template's unfilled line as a wish for the default, and only unsetting the variable says the latter.
 */
function given(variable: string, env: Env, fallback: string | null = null): string | undefined {
  const value = env[variable];
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (trimmed) return trimmed;
  const instead = fallback === null ? 'leave it unset' : `unset it for the default (${fallback})`;
  throw new ConfigError(variable, `is set but empty: give it a value, or ${instead}.`);
}

/** Reads one setting: its text (or default) through its kind; an unset optional one is its `unset` value. */
function read(setting: Setting<unknown>, env: Env): unknown {
  const fromFile = setting.file ? readSecretFile(setting, env) : undefined;
  const text = fromFile ?? given(setting.variable, env, setting.fallback) ?? setting.fallback;
  if (text === null) return setting.unset ?? null;
  const parsed = setting.kind.schema.safeParse(text);
  if (!parsed.success) {
    // A check with a message of its own (a secret that looks like a placeholder) says it rather than the kind's.
    const explained = parsed.error.issues.find((issue) => issue.code === 'custom' && issue.params?.['explained']);
    const got = setting.kind.echo === false ? '' : ` (got "${text}")`;
    const source = fromFile === undefined ? '' : ` (read from ${setting.variable}_FILE)`;
    throw new ConfigError(setting.variable, `${explained?.message ?? setting.kind.problem}${got}${source}.`);
  }
  return parsed.data;
}

/**
 * A secret given as a file (`DATABASE_URL_FILE=/run/secrets/database_url`, as Docker and Kubernetes mount secrets):
 * its content without the white space around it (the newline an editor or `echo` leaves); undefined when the
 * `_FILE` variable is unset. Setting both the variable and its `_FILE` is refused: which one wins would be a guess.
 */
function readSecretFile(setting: Setting<unknown>, env: Env): string | undefined {
  const variable = `${setting.variable}_FILE`;
  const path = given(variable, env);
  if (path === undefined) return undefined;
  if (given(setting.variable, env, setting.fallback) !== undefined) {
    throw new ConfigError(variable, `and ${setting.variable} are both set: set one of them.`);
  }
  let content: string;
  try {
    content = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new ConfigError(variable, `names a file that cannot be read (${code}: ${path}).`);
  }
  const text = content.trim();
  if (!text) throw new ConfigError(variable, `names an empty file (${path}).`);
  return text;
}

/**
 * The first words of the service's own variables (`DATABASE`, `WEBHOOK`, `ADMIN`…): a `*_FILE` variable starting
 * with one is meant for this service. NODE_ENV and the OpenTelemetry variables are shared with other software, so
 * `NODE_` and `OTEL_` are not the service's words.
 */
function ownWords(): Set<string> {
  const shared = new Set(['NODE', 'OTEL']);
  return new Set(
    allSettings()
      .map(({ setting }) => setting.variable.split('_')[0])
      .filter((word) => !shared.has(word)),
  );
}

/**
 * A `*_FILE` variable the service would not read is refused rather than ignored (issue 50: an instance given
 * `IDEMPOTENCY_KEY_PEPPER_FILE`, before the pepper had a file variant, started without a pepper): one naming a
 * setting that is not a secret (`PORT_FILE`), or one starting with a word of the service's own variables that names
 * no setting (`ADMIN_KEY_FILE`, `DATABASE_URLS_FILE`). Other `*_FILE` variables (`SSL_CERT_FILE`,
 * `POSTGRES_PASSWORD_FILE`) belong to other software and are left alone.
 */
function checkFileVariables(env: Env): void {
  const settings = new Map(allSettings().map(({ setting }) => [setting.variable, setting]));
  const secrets = [...settings.values()].filter((setting) => setting.file).map((setting) => `${setting.variable}_FILE`);
  const words = ownWords();
  for (const variable of Object.keys(env).sort()) {
    if (!variable.endsWith('_FILE') || env[variable] === undefined) continue;
    const named = settings.get(variable.slice(0, -'_FILE'.length));
    if (named?.file) continue;
    if (named) {
      throw new ConfigError(variable, `is not read: ${named.variable} is not a secret, set ${named.variable} itself.`);
    }
    if (words.has(variable.split('_')[0])) {
      throw new ConfigError(variable, `names no setting: the secrets read from files are ${secrets.join(', ')}.`);
    }
  }
}

/** Reads, checks and freezes the configuration; throws ConfigError (one line naming the variable). */
export function loadConfig(env: Env = process.env): AppConfig {
  checkFileVariables(env);
  const config: Record<string, Record<string, unknown>> = {};
  for (const { group, key, setting } of allSettings()) {
    (config[group] ??= {})[key] = read(setting, env);
  }
  const result = config as unknown as AppConfig;
  checkTogether(result);
  return deepFreeze(result);
}

/**
 * The log level and format alone, each its default when unset or invalid: how a start-up failure is written
 * when the configuration itself could not be read (one line, in the format the operator asked for).
 */
export function loggingSettings(env: Env = process.env): Pick<ConfigPart<'observability'>, 'logLevel' | 'logFormat'> {
  const { logLevel, logFormat } = CONFIG_SCHEMA.observability.settings;
  const lenient = <T>(setting: Setting<T>): T => {
    try {
      return read(setting as Setting<unknown>, env) as T;
    } catch {
      return read(setting as Setting<unknown>, {}) as T;
    }
  };
  return { logLevel: lenient(logLevel), logFormat: lenient(logFormat) };
}

/** The rules that relate two settings. */
function checkTogether(config: AppConfig): void {
  // Node refuses a headers timeout longer than the request timeout.
  if (config.http.headersTimeoutMs > config.http.requestTimeoutMs) {
    throw new ConfigError(
      'HTTP_HEADERS_TIMEOUT_MS',
      `must not exceed HTTP_REQUEST_TIMEOUT_MS (${config.http.requestTimeoutMs}).`,
    );
  }
  // NODE_ENV=production (the image sets it; `npm start` does not): the embedded PostgreSQL is a
  // development database, so a production service must be given its own.
  if (config.database.url === null && config.process.nodeEnv === 'production') {
    throw new ConfigError(
      'DATABASE_URL',
      'must be set when NODE_ENV=production: the embedded PostgreSQL is for development only.',
    );
  }
  // The metrics server would fail to listen only after a full start (migrations, workers).
  if (config.observability.metricsPort !== null && config.observability.metricsPort === config.http.port) {
    throw new ConfigError(
      'METRICS_PORT',
      `must differ from PORT (both ${config.http.port}): metrics get a port of their own, or leave METRICS_PORT unset.`,
    );
  }
  if (config.admission.limitMin > config.admission.limitMax) {
    throw new ConfigError('ADMISSION_LIMIT_MIN', `must not exceed ADMISSION_LIMIT_MAX (${config.admission.limitMax}).`);
  }
  // The maximum age is the bound of a lost signal; a staleness bound beyond it would promise nothing.
  if (config.catalogueCache.stalenessBoundMs > config.catalogueCache.maxAgeMs) {
    throw new ConfigError(
      'CATALOGUE_CACHE_STALENESS_BOUND_MS',
      `must not exceed CATALOGUE_CACHE_MAX_AGE_MS (${config.catalogueCache.maxAgeMs}).`,
    );
  }
  if (config.database.replicaUrls.length && config.database.url === null) {
    throw new ConfigError('DATABASE_REPLICA_URLS', 'is set without DATABASE_URL: they are replicas of that database.');
  }
  if (config.database.directUrl !== null && config.database.url === null) {
    throw new ConfigError('DATABASE_DIRECT_URL', 'is set without DATABASE_URL: it is the direct way to that database.');
  }
}

/** A setting's default as written in the environment, for prose that names it (OpenAPI descriptions). */
export function defaultOf<G extends ConfigGroup>(group: G, key: keyof Schema[G]['settings'] & string): string {
  const setting = (CONFIG_SCHEMA[group].settings as Record<string, Setting<unknown>>)[key];
  if (setting.fallback === null) throw new Error(`${setting.variable} has no default`);
  return setting.fallback;
}

/** A deep partial of the configuration, for `withConfig`. */
export type ConfigOverrides = { readonly [G in ConfigGroup]?: Partial<ConfigPart<G>> };

/** A new frozen configuration: `base` with some settings replaced (tests, the worker-only process). */
export function withConfig(base: AppConfig, overrides: ConfigOverrides): AppConfig {
  const copy: Record<string, unknown> = {};
  for (const group of Object.keys(base) as ConfigGroup[]) copy[group] = { ...base[group], ...overrides[group] };
  return deepFreeze(copy as unknown as AppConfig);
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !(value instanceof Date) && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
