import { Injectable } from '@nestjs/common';
import { Clock } from '../ports';
import { IdempotencyStore } from './idempotency.store';

/** Deletes the idempotency keys past their 24 hours (a scheduled job; expired keys are ignored anyway). */
@Injectable()
export class PurgeExpiredIdempotencyKeys {
  constructor(
    private readonly store: IdempotencyStore,
    private readonly clock: Clock,
  ) {}

  execute(): Promise<number> {
    return this.store.purgeExpired(this.clock.now());
  }
}
