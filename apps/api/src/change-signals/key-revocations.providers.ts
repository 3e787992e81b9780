import { Inject, Injectable, Logger, OnApplicationShutdown, Provider } from '@nestjs/common';
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

/** Stops listening for revocations when the application closes (app.close, shutdown signals). */
@Injectable()
class KeyRevocationsCloser implements OnApplicationShutdown {
  constructor(@Inject(PgKeyRevocations) private readonly revocations: PgKeyRevocations) {}

  onApplicationShutdown(): Promise<void> {
    return this.revocations.close();
  }
}

/**
 * The cache of verified keys and the signals between instances (PostgreSQL LISTEN/NOTIFY on the
 * service's database, one connection): key revocations, and webhook endpoint changes (for
 * WebhooksModule's SubscriberCache). `listen` false (the seed, a worker-only process): changes
 * are announced to the running instances, but this process caches nothing and listens to nothing.
 */
export function keyRevocationProviders(databaseUrl: string, listen: boolean): Provider[] {
  return [
    {
      provide: VerifiedKeyCacheSettings,
      useFactory: (auth: ConfigPart<'auth'>) => new VerifiedKeyCacheSettings(listen ? auth.apiKeyCacheSeconds : 0),
      inject: [configToken('auth')],
    },
    {
      provide: PgKeyRevocations,
      useFactory: async (host: TransactionHost) => {
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
      inject: [TransactionHost],
    },
    { provide: KeyRevocations, useExisting: PgKeyRevocations },
    {
      provide: WebhookEndpointChanges,
      useFactory: (revocations: PgKeyRevocations) => revocations.endpointChanges,
      inject: [PgKeyRevocations],
    },
    KeyRevocationsCloser,
    {
      provide: VerifiedKeyCache,
      useFactory: (revocations: KeyRevocations, clock: Clock, settings: VerifiedKeyCacheSettings) =>
        new VerifiedKeyCache(revocations, clock, settings),
      inject: [KeyRevocations, Clock, VerifiedKeyCacheSettings],
    },
  ];
}
