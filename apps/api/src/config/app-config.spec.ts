import { ConfigError, loadConfig } from './app-config';

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      databaseUrl: null,
      dataDir: '.data',
      adminApiKey: null,
      rateLimitPerMinute: 600,
      redisUrl: null,
      logLevel: 'info',
      messageWorker: true,
      shutdownTimeoutMs: 10000,
    });
    expect(config.petByIdSunset.toISOString()).toBe('2027-06-30T00:00:00.000Z');
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      DATABASE_URL: 'postgres://u@db:5432/petstore',
      ADMIN_API_KEY: 'a'.repeat(32),
      RATE_LIMIT_PER_MINUTE: '0',
      REDIS_URL: 'redis://localhost:6379',
      PET_BY_ID_SUNSET: '2030-01-01T00:00:00Z',
      LOG_LEVEL: 'debug',
      MESSAGE_WORKER: 'false',
      SHUTDOWN_TIMEOUT_MS: '2500',
    });
    expect(config).toMatchObject({
      port: 8080,
      databaseUrl: 'postgres://u@db:5432/petstore',
      adminApiKey: 'a'.repeat(32),
      rateLimitPerMinute: 0,
      redisUrl: 'redis://localhost:6379',
      logLevel: 'debug',
      messageWorker: false,
      shutdownTimeoutMs: 2500,
    });
    expect(config.petByIdSunset.toISOString()).toBe('2030-01-01T00:00:00.000Z');
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x@y/z'],
    ['DATABASE_URL', 'not a url'],
    ['ADMIN_API_KEY', 'short'],
    ['RATE_LIMIT_PER_MINUTE', '-1'],
    ['REDIS_URL', 'http://x'],
    ['PET_BY_ID_SUNSET', 'soon'],
    ['LOG_LEVEL', 'loud'],
    ['MESSAGE_WORKER', 'maybe'],
    ['SHUTDOWN_TIMEOUT_MS', '10s'],
  ])('refuses %s=%s with a line naming the variable', (variable, value) => {
    expect(() => loadConfig({ [variable]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [variable]: value })).toThrow(new RegExp(`^Invalid configuration: ${variable} `));
  });

  it('refuses the embedded PostgreSQL under NODE_ENV=production, with one line asking for DATABASE_URL', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(
      /^Invalid configuration: DATABASE_URL must be set when NODE_ENV=production: .*$/,
    );
    expect(loadConfig({ NODE_ENV: 'production', DATABASE_URL: 'postgres://u@db/petstore' }).databaseUrl).toBe(
      'postgres://u@db/petstore',
    );
    expect(loadConfig({ NODE_ENV: 'development' }).databaseUrl).toBeNull();
  });
});
