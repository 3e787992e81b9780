import { Global, Module } from '@nestjs/common';
import { IdempotencyStore, PurgeExpiredIdempotencyKeys, ResultSealer, RunIdempotently } from '@petstore/application';
import { HkdfResultSealer, PgIdempotencyStore } from '@petstore/infrastructure';
import { IdempotencyInterceptor } from './idempotency.interceptor';

/**
 * `Idempotency-Key` on every POST: the store, the sealer of results that show a secret, the use case, the
 * interceptor (put on every POST handler by the assembly, applyIdempotencyToPosts), and the purge of expired keys
 * (scheduled by the assembly). Global: the interceptor is resolved in each slice's module, none of which asks.
 */
@Global()
@Module({
  providers: [
    { provide: IdempotencyStore, useClass: PgIdempotencyStore },
    { provide: ResultSealer, useClass: HkdfResultSealer },
    RunIdempotently,
    IdempotencyInterceptor,
    PurgeExpiredIdempotencyKeys,
  ],
  exports: [RunIdempotently, IdempotencyInterceptor, IdempotencyStore],
})
export class IdempotencyModule {}
