import './tracing'; // first: OpenTelemetry (when configured) must load before http and pg
import { createRootLogger, nestLogger } from './common/logging/logging';
import { stopTracing } from './common/tracing/tracing';
import { AppConfig, ConfigError, loadConfig } from './config/app-config';
import { createApp } from './create-app';
import { openDatabase } from './database/open-database';
import { createWorker } from './messages/create-worker';

async function main(): Promise<void> {
  let config: AppConfig;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  // One pino logger for the whole process: start-up, framework, application and request logs.
  const rootLogger = createRootLogger(config);
  const logger = nestLogger(rootLogger);
  const database = await openDatabase(config, logger);
  if (process.argv.includes('--migrate-only')) {
    await database.stop();
    return;
  }

  // --worker-only: the message worker alone, no HTTP; any number of such processes may share the database.
  const workerOnly = process.argv.includes('--worker-only');
  const app = workerOnly ? null : await createApp({ config, databaseUrl: database.url, logger: rootLogger });
  const context = app ?? (await createWorker({ config, databaseUrl: database.url, logger: rootLogger }));

  // Stop taking requests, let in-flight ones finish, close the pool, then stop the embedded database.
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.log(`${signal} received: shutting down`);
    try {
      await context.close();
      await database.stop();
      await stopTracing();
    } finally {
      process.exit(0);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));

  if (!app) {
    logger.log('Message worker running alone (--worker-only): no HTTP');
    return;
  }
  await app.listen({ port: config.port, host: config.host });
  logger.log(`Listening on http://${config.host}:${config.port} (OpenAPI: /openapi.json, docs: /docs)`);
}

main().catch((error: unknown) => {
  console.error('Start-up failed:', error instanceof Error ? error.message : error);
  process.exit(1);
});
