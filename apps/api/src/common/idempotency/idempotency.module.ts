import { Global, Module } from '@nestjs/common';
import { IdempotencyStore, PurgeExpiredIdempotencyKeys, ResultSealer, RunIdempotently } from '@petstore/application';
import { HkdfResultSealer, PgIdempotencyStore } from '@petstore/infrastructure';

/**
 * `Idempotency-Key` on every POST: the store, the sealer of results that show a secret, the use case (injected into
 * each controller whose POST handlers the assembly wraps, applyIdempotencyToPosts), and the purge of expired keys
 * (scheduled by the assembly). Global: RunIdempotently is resolved in each slice's module, none of which asks.
 */
@Global()
@Module({
  providers: [
    { provide: IdempotencyStore, useClass: PgIdempotencyStore },
    { provide: ResultSealer, useClass: HkdfResultSealer },
    RunIdempotently,
    PurgeExpiredIdempotencyKeys,
  ],
  exports: [RunIdempotently, IdempotencyStore],
})
export class IdempotencyModule {}
