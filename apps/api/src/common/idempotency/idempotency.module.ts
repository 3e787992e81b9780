import { Module } from '@nestjs/common';
import { IdempotencyStore, PurgeExpiredIdempotencyKeys, RunIdempotently } from '@petstore/application';
import { PgIdempotencyStore } from '@petstore/infrastructure';
import { IdempotencyInterceptor } from './idempotency.interceptor';

/**
 * `@Idempotent()` operations (placing orders, sending messages): the store, the use case, the interceptor, and
 * the purge of expired keys (scheduled by the assembly).
 */
@Module({
  providers: [
    { provide: IdempotencyStore, useClass: PgIdempotencyStore },
    RunIdempotently,
    IdempotencyInterceptor,
    PurgeExpiredIdempotencyKeys,
  ],
  exports: [RunIdempotently, IdempotencyInterceptor, IdempotencyStore],
})
export class IdempotencyModule {}
