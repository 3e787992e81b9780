import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allSettings, AppConfig, ConfigError, defaultOf, loadConfig } from './app-config';

const ADMIN_KEY_OF_TEST = 'config-admin-key-5f0c9e2b7d4a18c3e6b1';

/** The eight time bounds, as the flat `timeouts` object the loader handed out before the schema grouped them. */
function timeouts({ http, database }: AppConfig) {
  return {
    httpConnectionMs: http.connectionTimeoutMs,
    httpRequestMs: http.requestTimeoutMs,
    httpHeadersMs: http.headersTimeoutMs,
    httpHandlerMs: http.handlerTimeoutMs,
    dbAcquireMs: database.acquireTimeoutMs,
    dbStatementMs: database.statementTimeoutMs,
    dbIdleInTransactionMs: database.idleInTransactionTimeoutMs,
    dbQueryMs: database.queryTimeoutMs,
  };
}

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      http: { port: 3000 },
      database: { url: null, dataDir: '.data' },
      auth: { adminApiKey: null, rateLimitPerMinute: 600, redisUrl: null },
      observability: { logLevel: 'info', logFormat: 'json', metricsPort: null, otlpEndpoint: null },
      messaging: { worker: true, maxAttempts: 10 },
      process: { shutdownTimeoutMs: 10000 },
    });
    expect(config.deprecations.petByIdSunset.toISOString()).toBe('2027-06-30T00:00:00.000Z');
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      DATABASE_URL: 'postgres://u@db:5432/petstore',
      ADMIN_API_KEY: ADMIN_KEY_OF_TEST,
      RATE_LIMIT_PER_MINUTE: '0',
      REDIS_URL: 'redis://localhost:6379',
      PET_BY_ID_SUNSET: '2030-01-01T00:00:00Z',
      LOG_LEVEL: 'debug',
      MESSAGE_WORKER: 'false',
      LOG_FORMAT: 'pretty',
      MESSAGE_MAX_ATTEMPTS: '3',
      METRICS_PORT: '9464',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      SHUTDOWN_TIMEOUT_MS: '2500',
    });
    expect(config).toMatchObject({
      http: { port: 8080 },
      database: { url: 'postgres://u@db:5432/petstore' },
      auth: { adminApiKey: ADMIN_KEY_OF_TEST, rateLimitPerMinute: 0, redisUrl: 'redis://localhost:6379' },
      observability: {
        logLevel: 'debug',
        logFormat: 'pretty',
        metricsPort: 9464,
        otlpEndpoint: 'http://collector:4318',
      },
      messaging: { worker: false, maxAttempts: 3 },
      process: { shutdownTimeoutMs: 2500 },
    });
    expect(config.deprecations.petByIdSunset.toISOString()).toBe('2030-01-01T00:00:00.000Z');
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x@y/z'],
    ['DATABASE_URL', 'not a url'],
    ['ADMIN_API_KEY', 'short'],
    ['ADMIN_API_KEY', 'a'.repeat(32)],
    ['ADMIN_API_KEY', 'ab'.repeat(16)],
    ['ADMIN_API_KEY', 'abcdefgh'.repeat(4)],
    ['ADMIN_API_KEY', 'password1234password1234password'],
    ['ADMIN_API_KEY', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab'],
    ['IDEMPOTENCY_KEY_PEPPER', 'a'.repeat(32)],
    ['IDEMPOTENCY_KEY_PEPPER', `${randomBytes(16).toString('hex')},short`],
    ['IDEMPOTENCY_KEY_PEPPER', Array.from({ length: 4 }, () => randomBytes(16).toString('hex')).join(',')],
    ['RATE_LIMIT_PER_MINUTE', '-1'],
    ['REDIS_URL', 'http://x'],
    ['PET_BY_ID_SUNSET', 'soon'],
    ['LOG_LEVEL', 'loud'],
    ['MESSAGE_WORKER', 'maybe'],
    ['LOG_FORMAT', 'xml'],
    ['MESSAGE_MAX_ATTEMPTS', '0'],
    ['METRICS_PORT', '0'],
    ['METRICS_PORT', 'ninety'],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'grpc://collector:4317'],
    ['SHUTDOWN_TIMEOUT_MS', '10s'],
    ['ADMISSION', 'maybe'],
    ['ADMISSION_LIMIT_MIN', '0'],
    ['ADMISSION_QUEUE_MS', '-1'],
    ['HTTP_LISTEN_BACKLOG', '0'],
    ['HTTP_LISTEN_BACKLOG', 'deep'],
  ])('refuses %s=%s with a line naming the variable', (variable, value) => {
    expect(() => loadConfig({ [variable]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [variable]: value })).toThrow(new RegExp(`^Invalid configuration: ${variable} `));
  });

  it('takes an ADMIN_API_KEY from a random source, whatever its alphabet, and a long chosen one', () => {
    const random = [
      ...Array.from({ length: 500 }, () => randomBytes(16).toString('hex')), // `openssl rand -hex 16`: 32 characters
      ...Array.from({ length: 100 }, () => randomBytes(24).toString('base64url')),
      'test-admin-key-0123456789abcdefghijklmnop', // the tests' own
    ];
    for (const key of random) expect(loadConfig({ ADMIN_API_KEY: key }).auth.adminApiKey).toBe(key);
  });

  it('takes IDEMPOTENCY_KEY_PEPPER as up to 3 secrets, newest first; unset, none', () => {
    expect(loadConfig({}).auth.idempotencyKeyPeppers).toEqual([]);
    const [current, previous] = [randomBytes(24).toString('hex'), randomBytes(24).toString('base64url')];
    const config = loadConfig({ IDEMPOTENCY_KEY_PEPPER: `${current}, ${previous}` });
    expect(config.auth.idempotencyKeyPeppers).toEqual([current, previous]);
  });

  it('has the documented time bounds, each settable, and keeps the headers bound within the request bound', () => {
    expect(timeouts(loadConfig({}))).toEqual({
      httpConnectionMs: 60_000,
      httpRequestMs: 30_000,
      httpHeadersMs: 10_000,
      httpHandlerMs: 30_000,
      dbAcquireMs: 5000,
      dbStatementMs: 5000,
      dbIdleInTransactionMs: 10_000,
      dbQueryMs: 6000,
    });
    const set = timeouts(
      loadConfig({
        HTTP_CONNECTION_TIMEOUT_MS: '1001',
        HTTP_REQUEST_TIMEOUT_MS: '1002',
        HTTP_HEADERS_TIMEOUT_MS: '1000',
        HTTP_HANDLER_TIMEOUT_MS: '1004',
        DB_ACQUIRE_TIMEOUT_MS: '1005',
        DB_STATEMENT_TIMEOUT_MS: '1006',
        DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: '1007',
        DB_QUERY_TIMEOUT_MS: '1008',
      }),
    );
    expect(Object.values(set)).toEqual([1001, 1002, 1000, 1004, 1005, 1006, 1007, 1008]);
    expect(() => loadConfig({ DB_STATEMENT_TIMEOUT_MS: '0' })).toThrow(
      /^Invalid configuration: DB_STATEMENT_TIMEOUT_MS /,
    );
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '40000' })).toThrow(
      /^Invalid configuration: HTTP_HEADERS_TIMEOUT_MS /,
    );
  });

  it('listens with a backlog of 4096 connections unless HTTP_LISTEN_BACKLOG says otherwise (Node: 511)', () => {
    expect(loadConfig({}).http.listenBacklog).toBe(4096);
    expect(loadConfig({ HTTP_LISTEN_BACKLOG: '128' }).http.listenBacklog).toBe(128);
  });

  it('reads the admission settings: on by default, never under 50 concurrent requests; off, or min above max', () => {
    expect(loadConfig({}).admission).toEqual({
      mode: 'on',
      limitMin: 64,
      limitMax: 1000,
      queueMs: 50,
      loopDelayMs: 10,
    });
    expect(loadConfig({}).admission.limitMin).toBeGreaterThanOrEqual(50);
    expect(loadConfig({ ADMISSION: 'off' }).admission.mode).toBe('off');
    expect(() => loadConfig({ ADMISSION_LIMIT_MIN: '10', ADMISSION_LIMIT_MAX: '5' })).toThrow(
      /^Invalid configuration: ADMISSION_LIMIT_MIN must not exceed ADMISSION_LIMIT_MAX \(5\)/,
    );
  });

  it('refuses the embedded PostgreSQL under NODE_ENV=production, with one line asking for DATABASE_URL', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(
      /^Invalid configuration: DATABASE_URL must be set when NODE_ENV=production: .*$/,
    );
    expect(loadConfig({ NODE_ENV: 'production', DATABASE_URL: 'postgres://u@db/petstore' }).database.url).toBe(
      'postgres://u@db/petstore',
    );
    expect(loadConfig({ NODE_ENV: 'development' }).database.url).toBeNull();
  });

  it('reads CORS_ORIGINS: none by default, * or a list of origins, and refuses anything else in one line', () => {
    expect(loadConfig({}).http.corsOrigins).toEqual([]);
    expect(loadConfig({ CORS_ORIGINS: '*' }).http.corsOrigins).toBe('*');
    expect(loadConfig({ CORS_ORIGINS: 'https://shop.example, http://localhost:5173' }).http.corsOrigins).toEqual([
      'https://shop.example',
      'http://localhost:5173',
    ]);
    const bad = ['shop.example', 'https://shop.example/', 'https://shop.example/app', 'ftp://x', '*,https://a.example'];
    for (const value of [...bad, 'https://a.example,']) {
      const line = /^Invalid configuration: CORS_ORIGINS must be \* or comma-separated/;
      expect(() => loadConfig({ CORS_ORIGINS: value })).toThrow(line);
    }
  });

  it('reads the order-hold limits: MAX_OPEN_UNITS_PER_CUSTOMER (100, 0 = off) and ORDER_HOLD_MINUTES (1440)', () => {
    expect(loadConfig({}).ordering).toMatchObject({ maxOpenUnitsPerCustomer: 100, orderHoldMinutes: 1440 });
    const set = loadConfig({ MAX_OPEN_UNITS_PER_CUSTOMER: '0', ORDER_HOLD_MINUTES: '30' });
    expect(set.ordering).toMatchObject({ maxOpenUnitsPerCustomer: 0, orderHoldMinutes: 30 });
    for (const [variable, value] of [
      ['MAX_OPEN_UNITS_PER_CUSTOMER', '-1'],
      ['MAX_OPEN_UNITS_PER_CUSTOMER', 'lots'],
      ['ORDER_HOLD_MINUTES', '0'],
      ['ORDER_HOLD_MINUTES', '1d'],
    ]) {
      expect(() => loadConfig({ [variable]: value })).toThrow(new RegExp(`^Invalid configuration: ${variable} `));
    }
  });
});

describe('loadConfig: API_KEY_CACHE_SECONDS', () => {
  it('caches verified keys for 5 seconds by default; 0 turns the cache off; at most 300', () => {
    expect(loadConfig({}).auth.apiKeyCacheSeconds).toBe(5);
    expect(loadConfig({ API_KEY_CACHE_SECONDS: '0' }).auth.apiKeyCacheSeconds).toBe(0);
    expect(loadConfig({ API_KEY_CACHE_SECONDS: ' 30 ' }).auth.apiKeyCacheSeconds).toBe(30);
    for (const value of ['-1', '301', '1.5', '5s']) {
      expect(() => loadConfig({ API_KEY_CACHE_SECONDS: value })).toThrow(
        /^Invalid configuration: API_KEY_CACHE_SECONDS must be a whole number from 0 to 300/,
      );
    }
  });
});

describe('loadConfig: abuse limits and TRUST_PROXY', () => {
  it('defaults to 20 sign-ups an hour, 20 failed authentications a minute, and no trusted proxy', () => {
    expect(loadConfig({})).toMatchObject({
      auth: { signupLimitPerHour: 20, authFailureLimitPerMinute: 20 },
      http: { trustProxy: false },
    });
  });

  it.each([
    ['true', true],
    ['false', false],
    ['2', 2],
    ['10.0.0.1', ['10.0.0.1']],
    ['10.0.0.0/8, ::1, fd00::/8,loopback', ['10.0.0.0/8', '::1', 'fd00::/8', 'loopback']],
  ])('reads TRUST_PROXY=%s as Fastify takes it', (value, expected) => {
    expect(loadConfig({ TRUST_PROXY: value }).http.trustProxy).toEqual(expected);
  });

  it('reads the limits', () => {
    const config = loadConfig({ SIGNUP_LIMIT_PER_HOUR: '5', AUTH_FAILURE_LIMIT_PER_MINUTE: '7' });
    expect(config.auth).toMatchObject({ signupLimitPerHour: 5, authFailureLimitPerMinute: 7 });
  });

  it.each([
    ['TRUST_PROXY', 'yes please'],
    ['TRUST_PROXY', '10.0.0.0/33'],
    ['TRUST_PROXY', '10.0.0.1,'],
    ['TRUST_PROXY', '300.1.1.1'],
    ['SIGNUP_LIMIT_PER_HOUR', '0'],
    ['AUTH_FAILURE_LIMIT_PER_MINUTE', 'many'],
  ])('refuses %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });
});

describe('loadConfig: one frozen part per concern', () => {
  it('hands out an immutable configuration', () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.http)).toBe(true);
    expect(Object.isFrozen(config.http.corsOrigins)).toBe(true);
    expect(() => Object.assign(config.http, { port: 1 })).toThrow(TypeError);
    expect(config.http.port).toBe(3000);
  });
});

describe('loadConfig: secrets', () => {
  it.each([
    ['ADMIN_API_KEY', 'short key'],
    ['DATABASE_URL', 'mysql://user:hunter2@db/petstore'],
    ['REDIS_URL', 'http://:hunter2@cache'],
  ])('does not repeat the value of %s in the error line', (variable, value) => {
    expect(() => loadConfig({ [variable]: value })).toThrow(new RegExp(`^Invalid configuration: ${variable} must `));
    expect(() => loadConfig({ [variable]: value })).not.toThrow(value);
  });
});

describe('loadConfig: secrets from files (*_FILE)', () => {
  let dir: string;
  const file = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'petstore-config-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads DATABASE_URL, DATABASE_DIRECT_URL, ADMIN_API_KEY and REDIS_URL from the file their _FILE names', () => {
    const config = loadConfig({
      DATABASE_URL_FILE: file('database_url', 'postgres://u:secret@db:5432/petstore\n'),
      DATABASE_DIRECT_URL_FILE: file('direct_url', 'postgres://u:secret@db-direct:5432/petstore'),
      ADMIN_API_KEY_FILE: file('admin_key', `  ${ADMIN_KEY_OF_TEST}\r\n`),
      REDIS_URL_FILE: file('redis_url', 'redis://:secret@cache:6379\n'),
    });
    expect(config.database).toMatchObject({
      url: 'postgres://u:secret@db:5432/petstore',
      directUrl: 'postgres://u:secret@db-direct:5432/petstore',
    });
    expect(config.auth).toMatchObject({ adminApiKey: ADMIN_KEY_OF_TEST, redisUrl: 'redis://:secret@cache:6379' });
  });

  it('refuses a setting and its _FILE both set, naming both', () => {
    const env = { ADMIN_API_KEY: 'a'.repeat(32), ADMIN_API_KEY_FILE: file('key', 'b'.repeat(32)) };
    expect(() => loadConfig(env)).toThrow(
      /^Invalid configuration: ADMIN_API_KEY_FILE and ADMIN_API_KEY are both set: set one of them\.$/,
    );
  });

  it('refuses a missing or empty file, and an invalid value read from one, without repeating the secret', () => {
    expect(() => loadConfig({ DATABASE_URL_FILE: join(dir, 'nowhere') })).toThrow(
      /^Invalid configuration: DATABASE_URL_FILE names a file that cannot be read \(ENOENT: .*nowhere\)\.$/,
    );
    expect(() => loadConfig({ REDIS_URL_FILE: file('empty', ' \n') })).toThrow(
      /^Invalid configuration: REDIS_URL_FILE names an empty file/,
    );
    const bad = () => loadConfig({ DATABASE_URL_FILE: file('bad', 'mysql://u:hunter2@db/x') });
    expect(bad).toThrow(/^Invalid configuration: DATABASE_URL must be .* \(read from DATABASE_URL_FILE\)\.$/);
    expect(bad).not.toThrow('hunter2');
  });

  it('offers _FILE for every setting whose value may be a secret (never repeated in an error), and only those', () => {
    const secrets = allSettings()
      .filter(({ setting }) => setting.file)
      .map(({ setting }) => setting.variable);
    const unrepeated = allSettings()
      .filter(({ setting }) => setting.kind.echo === false)
      .map(({ setting }) => setting.variable);
    expect(secrets).toEqual(unrepeated);
    expect(secrets).toEqual(expect.arrayContaining(['ADMIN_API_KEY', 'IDEMPOTENCY_KEY_PEPPER', 'DATABASE_URL']));
  });

  it('reads IDEMPOTENCY_KEY_PEPPER from a file (issue 50: the instance started without a pepper)', () => {
    const [current, previous] = [randomBytes(24).toString('hex'), randomBytes(24).toString('hex')];
    const config = loadConfig({ IDEMPOTENCY_KEY_PEPPER_FILE: file('pepper', `${current},${previous}\n`) });
    expect(config.auth.idempotencyKeyPeppers).toEqual([current, previous]);
  });

  it('refuses a _FILE of a setting that is not a secret, naming it, rather than ignoring it', () => {
    expect(() => loadConfig({ PORT_FILE: file('port', '9999') })).toThrow(
      /^Invalid configuration: PORT_FILE is not read: PORT is not a secret, set PORT itself\.$/,
    );
  });

  it.each(['ADMIN_KEY_FILE', 'DATABASE_URLS_FILE', 'IDEMPOTENCY_KEY_PEPPERS_FILE', 'REDIS_PASSWORD_FILE'])(
    "refuses %s, a _FILE of no setting among the service's own words, listing the ones there are",
    (variable) => {
      expect(() => loadConfig({ [variable]: file('misspelt', 'x') })).toThrow(
        new RegExp(
          `^Invalid configuration: ${variable} names no setting: the secrets read from files are ` +
            'DATABASE_URL_FILE, .*IDEMPOTENCY_KEY_PEPPER_FILE',
        ),
      );
    },
  );

  it("leaves other software's _FILE variables alone", () => {
    const env = { SSL_CERT_FILE: '/etc/ssl/certs/ca.pem', POSTGRES_PASSWORD_FILE: '/run/secrets/pg', NODE_FILE: 'x' };
    expect(loadConfig(env).http.port).toBe(3000);
  });

  it('refuses an empty _FILE like any empty variable', () => {
    expect(() => loadConfig({ DATABASE_URL_FILE: ' ' })).toThrow(
      /^Invalid configuration: DATABASE_URL_FILE is set but empty: give it a value, or leave it unset\.$/,
    );
  });
});

describe('loadConfig: empty values (issue 50: PORT= silently took 3000)', () => {
  it.each(allSettings().map(({ setting }) => [setting.variable, setting.fallback] as const))(
    'refuses %s set but empty, in one line naming it and what unsetting it means',
    (variable, fallback) => {
      for (const empty of ['', '  ']) {
        const instead = fallback === null ? 'leave it unset' : `unset it for the default \\(${escape(fallback)}\\)`;
        expect(() => loadConfig({ [variable]: empty })).toThrow(
          new RegExp(`^Invalid configuration: ${variable} is set but empty: give it a value, or ${instead}\\.$`),
        );
      }
    },
  );
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('loadConfig: placeholders for secrets (issue 50)', () => {
  it.each([
    'change-me-change-me-change-me-32',
    'REPLACE_WITH_A_RANDOM_32_CHAR_KEY',
    'your-admin-api-key-here-0123456789abcdef',
    'example-key-4f9a1c7e2b8d6a3f5c0e9b1d',
    'petstore-admin-xxxxxxxxxxxxxxxxxxxxxxxx',
    '3f9a1c7e2b8d0000000000006a3f5c0e9b1d',
    'placeholder_for_the_admin_key_7f3a9c1e',
  ])('refuses ADMIN_API_KEY=%s as a placeholder, saying so without repeating it', (value) => {
    const load = () => loadConfig({ ADMIN_API_KEY: value });
    expect(load).toThrow(/^Invalid configuration: ADMIN_API_KEY looks like a placeholder, not a generated secret \(/);
    expect(load).toThrow(/openssl rand -hex 24/);
    expect(load).not.toThrow(value);
  });

  it('refuses a placeholder in IDEMPOTENCY_KEY_PEPPER too, and from a file', () => {
    const real = randomBytes(24).toString('hex');
    expect(() => loadConfig({ IDEMPOTENCY_KEY_PEPPER: `${real},CHANGE_ME_TO_A_LONG_RANDOM_VALUE_123` })).toThrow(
      /^Invalid configuration: IDEMPOTENCY_KEY_PEPPER looks like a placeholder/,
    );
  });
});

describe('loadConfig: REDIS_KEY_PREFIX', () => {
  it('is petstore: by default (the rate-limit keys stay petstore:ratelimit:…) and may be set', () => {
    expect(loadConfig({}).auth.redisKeyPrefix).toBe('petstore:');
    expect(loadConfig({ REDIS_KEY_PREFIX: 'shop-eu:petstore:' }).auth.redisKeyPrefix).toBe('shop-eu:petstore:');
  });

  it.each(['a b', 'pets*', 'x'.repeat(101), 'key{1}'])('refuses %s', (value) => {
    expect(() => loadConfig({ REDIS_KEY_PREFIX: value })).toThrow(
      /^Invalid configuration: REDIS_KEY_PREFIX must be 1 to 100 letters, digits or : \. _ - \(got ".*"\)\.$/,
    );
  });
});

describe('loadConfig: METRICS_PORT', () => {
  it('refuses METRICS_PORT equal to PORT in one line naming both, at load rather than after a full start', () => {
    expect(() => loadConfig({ METRICS_PORT: '3000' })).toThrow(
      /^Invalid configuration: METRICS_PORT must differ from PORT \(both 3000\)/,
    );
    expect(() => loadConfig({ PORT: '9464', METRICS_PORT: '9464' })).toThrow(ConfigError);
    expect(loadConfig({ PORT: '3000', METRICS_PORT: '9464' }).observability.metricsPort).toBe(9464);
  });
});

describe('defaultOf', () => {
  it('gives the default the loader uses, as prose that names a setting shows it', () => {
    expect(defaultOf('ordering', 'orderHoldMinutes')).toBe(String(loadConfig({}).ordering.orderHoldMinutes));
    expect(defaultOf('messaging', 'maxAttempts')).toBe('10');
    expect(() => defaultOf('database', 'url')).toThrow('DATABASE_URL has no default');
  });
});

describe('loadConfig: read replicas', () => {
  it('has none by default, a bound of 1 s, and reads a list of replica URLs (or a file of them)', () => {
    expect(loadConfig({}).database).toMatchObject({ replicaUrls: [], replicaMaxLagMs: 1000 });
    const config = loadConfig({
      DATABASE_URL: 'postgres://u@primary:5432/petstore',
      DATABASE_REPLICA_URLS: 'postgres://u:pw@replica-a:5432/petstore, postgresql://u:pw@replica-b/petstore',
      DATABASE_REPLICA_MAX_LAG_MS: '2000',
    });
    expect(config.database).toMatchObject({
      replicaUrls: ['postgres://u:pw@replica-a:5432/petstore', 'postgresql://u:pw@replica-b/petstore'],
      replicaMaxLagMs: 2000,
    });
  });

  it('refuses a URL not PostgreSQL (unrepeated), replicas without DATABASE_URL, and a bound past 60 s', () => {
    const bad = () =>
      loadConfig({
        DATABASE_URL: 'postgres://u@p/db',
        DATABASE_REPLICA_URLS: 'postgres://a/db,mysql://u:hunter2@b/db',
      });
    expect(bad).toThrow(/^Invalid configuration: DATABASE_REPLICA_URLS must be up to 8 comma-separated/);
    expect(bad).not.toThrow('hunter2');
    expect(() => loadConfig({ DATABASE_REPLICA_URLS: 'postgres://a/db' })).toThrow(
      /^Invalid configuration: DATABASE_REPLICA_URLS is set without DATABASE_URL/,
    );
    expect(() => loadConfig({ DATABASE_REPLICA_MAX_LAG_MS: '60001' })).toThrow(/DATABASE_REPLICA_MAX_LAG_MS/);
  });
});
