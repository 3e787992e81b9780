import { Injectable } from '@nestjs/common';
import { Clock, UnitOfWork } from '../ports';
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError } from './idempotency.errors';
import { CommandResult, IdempotencyStore } from './idempotency.store';

/** How long a key is kept (docs/api.md, Idempotency: 24 hours). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** The command's result, and whether it is the one kept from an earlier run (a replay). */
export interface IdempotentOutcome {
  replayed: boolean;
  result: CommandResult;
}

/**
 * Runs a request at most once per (account, key):
 * - one transaction holds the key's lock, the request's own effects and the stored result,
 *   so a crash or an error leaves no record and the client may simply retry;
 * - a retry of a completed request gets the first result again (the same serialized text);
 * - the same key with another request is refused (IdempotencyKeyReusedError), and so is a
 *   duplicate that arrives while the first is still running (IdempotencyKeyInUseError), without waiting.
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
    handle: () => Promise<CommandResult>,
  ): Promise<IdempotentOutcome> {
    return this.uow.run(async () => {
      if (!(await this.store.tryLock(request.accountId, request.key))) throw new IdempotencyKeyInUseError();
      const now = this.clock.now();
      const existing = await this.store.find(request.accountId, request.key, now);
      if (existing) {
        if (existing.fingerprint !== request.fingerprint) throw new IdempotencyKeyReusedError();
        return { replayed: true, result: existing.result };
      }
      const result = await handle();
      await this.store.save(
        request.accountId,
        request.key,
        { fingerprint: request.fingerprint, result },
        new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
      );
      return { replayed: false, result };
    });
  }
}
