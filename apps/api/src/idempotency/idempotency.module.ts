import { Module } from '@nestjs/common';
import { IdempotencyStore, PurgeExpiredIdempotencyKeys, ResultSealer, RunIdempotently } from '@petstore/application';
import { HkdfResultSealer, IdempotencyKeyPeppers, PgIdempotencyStore } from '@petstore/infrastructure';
import type { ConfigPart } from '../config/app-config';
import { configToken } from '../config/config.module';

/**
 * `Idempotency-Key` on every POST, PATCH and DELETE: the store, the sealer of results that show a secret, the use case
 * (injected into each controller whose write handlers the assembly wraps, applyIdempotencyToWrites), and the purge of
 * expired keys (scheduled by the assembly); the store and the sealer take the optional pepper (IDEMPOTENCY_KEY_PEPPER).
 * Not global: each slice's HTTP module whose controllers have POST, PATCH or DELETE handlers imports it, as
 * RunIdempotently is resolved there; the assembly imports it for the purge in a process without HTTP.
 */
@Module({
  providers: [
    {
      provide: IdempotencyKeyPeppers,
      useFactory: (auth: ConfigPart<'auth'>) => new IdempotencyKeyPeppers(auth.idempotencyKeyPeppers),
      inject: [configToken('auth')],
    },
    { provide: IdempotencyStore, useClass: PgIdempotencyStore },
    { provide: ResultSealer, useClass: HkdfResultSealer },
    RunIdempotently,
    PurgeExpiredIdempotencyKeys,
  ],
  exports: [RunIdempotently, IdempotencyStore],
})
export class IdempotencyModule {}
