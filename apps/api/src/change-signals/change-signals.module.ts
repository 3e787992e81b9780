import { Module, ValueProvider } from '@nestjs/common';
import { KeyRevocations, VerifiedKeyCache, WebhookEndpointChanges } from '@petstore/application';
import { ChangeSignalsSettings } from './change-signals.settings';
import { keyRevocationProviders } from './key-revocations.providers';

/**
 * The signals between instances (revoked keys, changed webhook endpoints) over one listening connection, and
 * the cache of verified keys. Process-wide (one LISTEN connection per process), but not global: a static module,
 * imported by the modules that read it (accounts for the keys, webhooks for the endpoints) and by the assembly
 * (the API key guard), one instance however many import it. Where it listens, and whether (the `http` role), is
 * ChangeSignalsSettings, which the assembly hands it through the configuration (ChangeSignalsModule.settings).
 */
@Module({
  providers: keyRevocationProviders(),
  exports: [KeyRevocations, VerifiedKeyCache, WebhookEndpointChanges],
})
export class ChangeSignalsModule {
  /** This process's settings, for ConfigModule.forRoot (the assembly). */
  static settings(settings: ChangeSignalsSettings): ValueProvider<ChangeSignalsSettings> {
    return { provide: ChangeSignalsSettings, useValue: settings };
  }
}
