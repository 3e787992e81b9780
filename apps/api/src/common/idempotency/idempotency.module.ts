import { Global, Module } from '@nestjs/common';
import { IdempotencyStore, RunIdempotently } from '@petstore/application';
import { TypeOrmIdempotencyStore } from '@petstore/infrastructure';
import { IdempotencyInterceptor } from './idempotency.interceptor';

@Global()
@Module({
  providers: [
    { provide: IdempotencyStore, useClass: TypeOrmIdempotencyStore },
    RunIdempotently,
    IdempotencyInterceptor,
  ],
  exports: [RunIdempotently, IdempotencyInterceptor, IdempotencyStore],
})
export class IdempotencyModule {}
