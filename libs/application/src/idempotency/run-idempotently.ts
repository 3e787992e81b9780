import { Injectable } from '@nestjs/common';
import { Clock, UnitOfWork } from '../ports';
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError } from './idempotency.errors';
import { IdempotencyStore, StoredResponse } from './idempotency.store';

/** How long a key is kept (docs/api.md, Idempotency: 24 hours). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export type IdempotentOutcome = { replayed: false; response: StoredResponse } | { replayed: true; response: StoredResponse };

/**
 * Runs a request at most once per (account, key):
 * - one transaction holds the key's lock, the request's own effects and the stored response,
 *   so a crash or an error leaves no record and the client may simply retry;
 * - a retry of a completed request gets the first response again;
 * - the same key with another request is refused (422), and so is a duplicate that
 *   arrives while the first is still running (409), without waiting for it.
 */
@Injectable()
export class RunIdempotently {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly store: IdempotencyStore,
    private readonly clock: Clock,
  ) {}

  execute(
    request: { accountId: number; key: string; fingerprint: string },
    handle: () => Promise<StoredResponse>,
  ): Promise<IdempotentOutcome> {
    return this.uow.run(async () => {
      if (!(await this.store.tryLock(request.accountId, request.key))) throw new IdempotencyKeyInUseError();
      const now = this.clock.now();
      const existing = await this.store.find(request.accountId, request.key, now);
      if (existing) {
        if (existing.fingerprint !== request.fingerprint) throw new IdempotencyKeyReusedError();
        return { replayed: true as const, response: existing.response };
      }
      const response = await handle();
      await this.store.save(
        request.accountId,
        request.key,
        { fingerprint: request.fingerprint, response },
        new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
      );
      return { replayed: false as const, response };
    });
  }
}
