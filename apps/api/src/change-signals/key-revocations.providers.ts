import { Inject, Injectable, Logger, OnApplicationShutdown, Optional, Provider } from '@nestjs/common';
import {
  Clock,
  KeyRevocations,
  VerifiedKeyCache,
  VerifiedKeyCacheSettings,
  WebhookEndpointChanges,
} from '@petstore/application';
import { PgKeyRevocations, TransactionHost } from '@petstore/infrastructure';
import { ConfigPart } from '../config/app-config';
import { configToken } from '../config/config.module';
import { Metrics } from '../metrics/metrics';
import { ChangeSignalsSettings } from './change-signals.settings';

/** Stops listening for revocations when the application closes (app.close, shutdown signals). */
@Injectable()
class KeyRevocationsCloser implements OnApplicationShutdown {
  constructor(@Inject(PgKeyRevocations) private readonly revocations: PgKeyRevocations) {}

  onApplicationShutdown(): Promise<void> {
    return this.revocations.close();
  }
}

/**
 * Whether this process receives the signals between instances (its LISTEN connection proves itself with a
 * heartbeat): 0 means the key and webhook-subscriber caches are off, from a lost connection or a pooler between
 * the listener and PostgreSQL (DATABASE_DIRECT_URL), and every request looks its key up. Only a process that
 * listens has it (the assembly: the `http` role): a `--worker-only` process runs no listener and keeps no cache,
 * and its `0` forever was a false alarm. Nor has a process without the metrics registry (the seed).
 */
@Injectable()
class ChangeListenerMetrics {
  constructor(
    @Inject(ChangeSignalsSettings) settings: ChangeSignalsSettings,
    @Inject(PgKeyRevocations) revocations: PgKeyRevocations,
    @Optional() metrics?: Metrics,
  ) {
    if (!metrics || !settings.listen) return;
    metrics.gauge(
      'db_change_listener_up',
      'Whether the LISTEN connection receives (its own heartbeat comes back): 1 yes, 0 no (caches off).',
      () => (revocations.listening ? 1 : 0),
    );
  }
}

/**
 * The cache of verified keys and the signals between instances (PostgreSQL LISTEN/NOTIFY on the
 * service's database, one connection): key revocations, and webhook endpoint changes (for
 * WebhooksModule's SubscriberCache). ChangeSignalsSettings `listen` false (the seed, a worker-only process):
 * changes are announced to the running instances, but this process caches nothing and listens to nothing.
 */
export function keyRevocationProviders(): Provider[] {
  return [
    {
      provide: VerifiedKeyCacheSettings,
      useFactory: (auth: ConfigPart<'auth'>, { listen }: ChangeSignalsSettings) =>
        new VerifiedKeyCacheSettings(listen ? auth.apiKeyCacheSeconds : 0),
      inject: [configToken('auth'), ChangeSignalsSettings],
    },
    {
      provide: PgKeyRevocations,
      useFactory: async (host: TransactionHost, { databaseUrl, listen }: ChangeSignalsSettings) => {
        const logger = new Logger('KeyRevocations');
        const revocations = new PgKeyRevocations(host, {
          url: databaseUrl,
          onError: (error) =>
            logger.warn(`Not receiving key revocations nor endpoint changes (no caching until back): ${String(error)}`),
          onRecovered: () => logger.log('Receiving key revocations and endpoint changes again (caching resumes)'),
        });
        // Listening keeps the caches fresh (the webhook subscribers' one even with API_KEY_CACHE_SECONDS=0).
        if (listen) await revocations.listen();
        return revocations;
      },
      inject: [TransactionHost, ChangeSignalsSettings],
    },
    { provide: KeyRevocations, useExisting: PgKeyRevocations },
    {
      provide: WebhookEndpointChanges,
      useFactory: (revocations: PgKeyRevocations) => revocations.endpointChanges,
      inject: [PgKeyRevocations],
    },
    KeyRevocationsCloser,
    ChangeListenerMetrics,
    {
      provide: VerifiedKeyCache,
      useFactory: (revocations: KeyRevocations, clock: Clock, settings: VerifiedKeyCacheSettings) =>
        new VerifiedKeyCache(revocations, clock, settings),
      inject: [KeyRevocations, Clock, VerifiedKeyCacheSettings],
    },
  ];
}
