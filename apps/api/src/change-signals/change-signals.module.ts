import { DynamicModule, Module } from '@nestjs/common';
import { KeyRevocations, VerifiedKeyCache, WebhookEndpointChanges } from '@petstore/application';
import { keyRevocationProviders } from './key-revocations.providers';

/**
 * The signals between instances (revoked keys, changed webhook endpoints) over one listening connection, and
 * the cache of verified keys. Global because it is process-wide: one LISTEN connection per process, read by
 * accounts (keys) and webhooks (endpoints). `listen` false (a process without the `http` role): changes are
 * announced, nothing is received or cached.
 */
@Module({})
export class ChangeSignalsModule {
  static register(databaseUrl: string, listen: boolean): DynamicModule {
    return {
      module: ChangeSignalsModule,
      global: true,
      providers: keyRevocationProviders(databaseUrl, listen),
      exports: [KeyRevocations, VerifiedKeyCache, WebhookEndpointChanges],
    };
  }
}
