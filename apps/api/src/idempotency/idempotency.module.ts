import { Global, Module } from '@nestjs/common';
import { IdempotencyStore, PurgeExpiredIdempotencyKeys, ResultSealer, RunIdempotently } from '@petstore/application';
import { HkdfResultSealer, IdempotencyKeyPeppers, PgIdempotencyStore } from '@petstore/infrastructure';
import type { ConfigPart } from '../config/app-config';
import { configToken } from '../config/config.module';

/**
 * `Idempotency-Key` on every POST: the store, the sealer of results that show a secret, the use case (injected into
 * each controller whose POST handlers the assembly wraps, applyIdempotencyToPosts), and the purge of expired keys
 * (scheduled by the assembly); the store and the sealer take the optional pepper (IDEMPOTENCY_KEY_PEPPER).
 * Global: RunIdempotently is resolved in each slice's module, none of which asks.
 */
@Global()
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
