import { Global, Inject, Injectable, Logger, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Clock, IdempotencyStore, RunIdempotently } from '@petstore/application';
import { TypeOrmIdempotencyStore } from '@petstore/infrastructure';
import { IdempotencyInterceptor } from './idempotency.interceptor';

const PURGE_EVERY_MS = 10 * 60 * 1000;

/** Deletes expired idempotency keys now and then (they are ignored once expired anyway). */
@Injectable()
export class IdempotencyPurger implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private readonly logger = new Logger('Idempotency');

  constructor(
    @Inject(IdempotencyStore) private readonly store: IdempotencyStore,
    @Inject(Clock) private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.purge(), PURGE_EVERY_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  async purge(): Promise<number> {
    try {
      const purged = await this.store.purgeExpired(this.clock.now());
      if (purged) this.logger.log(`Purged ${purged} expired idempotency keys`);
      return purged;
    } catch (error) {
      this.logger.warn(`Purging idempotency keys failed: ${(error as Error).message}`);
      return 0;
    }
  }
}

@Global()
@Module({
  providers: [
    { provide: IdempotencyStore, useClass: TypeOrmIdempotencyStore },
    RunIdempotently,
    IdempotencyInterceptor,
    IdempotencyPurger,
  ],
  exports: [RunIdempotently, IdempotencyInterceptor, IdempotencyStore],
})
export class IdempotencyModule {}
