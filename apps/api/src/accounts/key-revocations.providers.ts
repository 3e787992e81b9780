import { Inject, Injectable, Logger, OnApplicationShutdown, Provider } from '@nestjs/common';
import { Clock, KeyRevocations, VerifiedKeyCache, VerifiedKeyCacheSettings } from '@petstore/application';
import { PgKeyRevocations, TransactionHost } from '@petstore/infrastructure';
import { AppConfig } from '../config/app-config';

/** Stops listening for revocations when the application closes (app.close, shutdown signals). */
@Injectable()
class KeyRevocationsCloser implements OnApplicationShutdown {
  constructor(@Inject(PgKeyRevocations) private readonly revocations: PgKeyRevocations) {}

  onApplicationShutdown(): Promise<void> {
    return this.revocations.close();
  }
}

/**
 * The cache of verified keys and the revocation signal it relies on (PostgreSQL LISTEN/NOTIFY on
 * the service's database). `listen` false (the seed): revocations are announced to the running
 * instances, but this process caches nothing and listens to nothing.
 */
export function keyRevocationProviders(databaseUrl: string, listen: boolean): Provider[] {
  return [
    {
      provide: VerifiedKeyCacheSettings,
      useFactory: (config: AppConfig) => new VerifiedKeyCacheSettings(listen ? config.apiKeyCacheSeconds : 0),
      inject: [AppConfig],
    },
    {
      provide: PgKeyRevocations,
      useFactory: async (host: TransactionHost, settings: VerifiedKeyCacheSettings) => {
        const logger = new Logger('KeyRevocations');
        const revocations = new PgKeyRevocations(host, {
          url: databaseUrl,
          onError: (error) =>
            logger.warn(`Not receiving key revocations (cached keys unused until back): ${String(error)}`),
        });
        // With no cache there is nothing to keep fresh: announcing is enough.
        if (settings.ttlSeconds > 0) await revocations.listen();
        return revocations;
      },
      inject: [TransactionHost, VerifiedKeyCacheSettings],
    },
    { provide: KeyRevocations, useExisting: PgKeyRevocations },
    KeyRevocationsCloser,
    {
      provide: VerifiedKeyCache,
      useFactory: (revocations: KeyRevocations, clock: Clock, settings: VerifiedKeyCacheSettings) =>
        new VerifiedKeyCache(revocations, clock, settings),
      inject: [KeyRevocations, Clock, VerifiedKeyCacheSettings],
    },
  ];
}
