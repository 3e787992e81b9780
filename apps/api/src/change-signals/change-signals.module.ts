import { Module, ValueProvider } from '@nestjs/common';
import { KeyRevocations, VerifiedKeyCache, WebhookEndpointChanges } from '@petstore/application';
import { CatalogueCache } from '../common/conditional/catalogue-cache';
import { catalogueCacheProviders } from './catalogue-cache.providers';
import { ChangeSignalsSettings } from './change-signals.settings';
import { keyRevocationProviders } from './key-revocations.providers';

/**
 * The signals between instances (revoked keys, changed webhook endpoints, catalogue changes) over one listening
 * connection, the cache of verified keys and the catalogue cache. Process-wide (one LISTEN connection per
 * process), but not global: a static module, imported by the modules that read it (accounts for the keys, webhooks
 * for the endpoints) and by the assembly (the API key guard and the catalogue cache's hooks), one instance however
 * many import it. Where it listens, and whether (the `http` role), is
 * ChangeSignalsSettings, which the assembly hands it through the configuration (ChangeSignalsModule.settings).
 */
@Module({
  providers: [...keyRevocationProviders(), ...catalogueCacheProviders()],
  exports: [KeyRevocations, VerifiedKeyCache, WebhookEndpointChanges, CatalogueCache],
})
export class ChangeSignalsModule {
  /** This process's settings, for ConfigModule.forRoot (the assembly). */
  static settings(settings: ChangeSignalsSettings): ValueProvider<ChangeSignalsSettings> {
    return { provide: ChangeSignalsSettings, useValue: settings };
  }
}
