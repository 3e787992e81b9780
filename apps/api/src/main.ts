import './common/tracing/preload'; // first: OpenTelemetry (when configured) must load before http and pg
import { createRootLogger, nestLogger, RootLogger } from './common/logging/logging';
import { stopTracing } from './common/tracing/tracing';
import { INestApplicationContext } from '@nestjs/common';
import { ConfigError, loadConfig, loggingSettings } from './config/app-config';
import { createApp } from './create-app';
import { openDatabase } from './database/open-database';
import { Drain, shutdownShares } from './common/drain/drain.service';
import { ShutdownSignals } from './lifecycle/shutdown-signals.handler';
import { createContext } from './assembly/assembly';
import { rolesOf } from './assembly/roles';
import { seedDemoData } from './seed/seed';
import { asyncContextMode, describeRelease, runtimeWarning } from './release/release';

/** The process's logger once the configuration is read; until then a start-up failure uses loggingSettings. */
let rootLogger: RootLogger | undefined;

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  // One pino logger for the whole process: start-up, framework, application and request logs.
  rootLogger = createRootLogger(config.observability);
  const logger = nestLogger(rootLogger);
  logger.log(
    `Petstore API ${describeRelease()} starting, on Node.js ${process.version} (async context: ${asyncContextMode()})`,
  );
  const outdated = runtimeWarning();
  if (outdated) logger.warn(outdated, 'Runtime');
  const signals = new ShutdownSignals(
    config.process.shutdownTimeoutMs,
    shutdownShares(config.process.shutdownTimeoutMs),
    logger,
  );
  const database = await openDatabase(config, logger);
  signals.onStop(() => database.stop());
  signals.atDeadline(() => database.stop());
  if (signals.stopping) return; // a signal came while the database opened: it is being stopped
  // What this process runs: the API (with MESSAGE_WORKER its workers and scheduled jobs), --worker-only,
  // --seed (npm run seed) or --migrate-only (npm run db:migrate); openDatabase has migrated already.
  const roles = rolesOf(process.argv, config);
  const options = {
    roles,
    config,
    databaseUrl: database.url,
    directDatabaseUrl: database.directUrl,
    logger: rootLogger,
  };
  if (!roles.has('http') && !roles.has('worker') && !roles.has('seed')) {
    await database.stop();
    return;
  }
  // The demo catalogue into an empty database, then exit.
  if (roles.has('seed')) {
    try {
      const seeding = await createContext(options);
      await seedDemoData(seeding, config.http.port).finally(() => seeding.close());
    } finally {
      await database.stop();
    }
    return;
  }

  // Without HTTP (--worker-only): any number of such processes may share the database.
  let context: INestApplicationContext | undefined;
  try {
    const app = roles.has('http') ? await createApp(options) : null;
    context = app ?? (await createContext(options));
    const started = context;
    // Readiness 503 and new requests refused while the ones in flight finish, then the worker and the pool
    // close, then the embedded database stops.
    signals.onStop(async () => {
      const drain = app?.get(Drain);
      const { drainMs } = shutdownShares(config.process.shutdownTimeoutMs);
      const drained = !drain || (await drain.drain(drainMs));
      // One line for all the requests refused meanwhile (each has its info access line, nothing more).
      if (drain?.refused) logger.log(`Refused ${drain.refused} requests while draining (503, Retry-After: 1)`);
      if (!drained) {
        logger.warn(`Requests in flight after ${drainMs} ms (the drain's share of SHUTDOWN_TIMEOUT_MS): cut off`);
        // Answered 503 (and logged) first, their transactions kept from committing; then the sockets close.
        await app?.get(Drain).cutOff(Math.min(500, (config.process.shutdownTimeoutMs - drainMs) / 2));
        app?.getHttpServer().closeAllConnections();
      }
      await started.close();
      await database.stop();
      await stopTracing();
      return drained;
    });
    if (signals.stopping) return;
    if (!app) {
      logger.log('Message worker running alone (--worker-only): no HTTP');
      return;
    }
    await app.listen({ port: config.http.port, host: config.http.host, backlog: config.http.listenBacklog });
  } catch (error) {
    // A start-up failure (port in use, a module that fails to start…) leaves nothing running behind it.
    await context?.close().catch(() => undefined);
    await database.stop();
    throw error;
  }
  logger.log(`Listening on http://${config.http.host}:${config.http.port} (OpenAPI: /openapi.json, docs: /docs)`);
}

/**
 * A start-up failure, whatever its cause, is one line in the configured format (JSON by default) that names it,
 * then exit 1: what an operator's log pipeline reads. The stack only at LOG_LEVEL=debug.
 */
main().catch((error: unknown) => {
  const settings = loggingSettings(process.env);
  const logger = rootLogger ?? createRootLogger(settings);
  const cause = error instanceof ConfigError ? error.message : error instanceof Error ? error.message : String(error);
  const stack = settings.logLevel === 'debug' && error instanceof Error ? { stack: error.stack } : {};
  logger.fatal({ context: 'Startup', ...stack }, `Start-up failed: ${cause}`);
  // The destination is asynchronous: an earlier write may still be in flight, and exiting at once let it land after
  // this line, which was then not the last (CI saw the Node-version warning last, under load). Exit once everything
  // is written; after 2 s whatever happens (a ref'd timer: the process must not end with status 0 meanwhile).
  setTimeout(() => process.exit(1), 2000);
  logger.flush(() => process.exit(1));
});
