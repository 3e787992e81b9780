import { Injectable } from '@nestjs/common';
import { Clock, UnitOfWork } from '../ports';
import {
  IdempotencyKeyInUseError,
  IdempotencyKeyReusedError,
  IdempotentReplayWithheldError,
} from './idempotency.errors';
import { CommandResult, IdempotencyOwner, IdempotencyStore } from './idempotency.store';
import { ResultSealer } from './result-sealer';

/** How long a key is kept (docs/api.md, Idempotency: 24 hours). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** The command's result, and whether it is the one kept from an earlier run (a replay). */
export interface IdempotentOutcome {
  replayed: boolean;
  result: CommandResult;
}

export interface IdempotentRequest {
  /** The calling account, or null for an operation without an API key. */
  accountId: IdempotencyOwner;
  /** The Idempotency-Key as the client sent it (the store keeps only its hash). */
  key: string;
  /** What makes two requests the same (method, path, body; for a sealed result, the API key that sent it). */
  fingerprint: string;
  /**
   * A fingerprint under which a kept result exists but must not be replayed to this request, nor is it another
   * request: a record of a release that did not scope sealed results to the API key (its fingerprint lacks the key).
   * It cannot say which key made it, so its replay is withheld (IdempotentReplayWithheldError); nothing runs again.
   */
  withheldFingerprint?: string;
  /** The result shows a secret: it is kept sealed with a key derived from `key` (ResultSealer). */
  sealResult?: boolean;
}

/**
 * Runs a request at most once per (owner, key):
 * - one transaction holds the key's lock, the request's own effects and the stored result,
 *   so a crash or an error leaves no record and the client may simply retry;
 * - a retry of a completed request gets the first result again (the same serialized text);
 * - the same key with another request is refused (IdempotencyKeyReusedError), and so is a
 *   duplicate that arrives while the first is still running (IdempotencyKeyInUseError), without waiting;
 * - a result that shows a secret is kept sealed; one that does not open is withheld (IdempotentReplayWithheldError),
 *   never run again.
 */
@Injectable()
export class RunIdempotently {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly store: IdempotencyStore,
    private readonly clock: Clock,
    private readonly sealer: ResultSealer,
  ) {}

  execute(request: IdempotentRequest, handle: () => Promise<CommandResult>): Promise<IdempotentOutcome> {
    const { accountId: owner, key, fingerprint } = request;
    // The sealed text belongs to this owner and this request: copied onto another record, it does not open.
    const binding = `${owner ?? 'anonymous'}\n${fingerprint}`;
    return this.uow.run(async () => {
      if (!(await this.store.tryLock(owner, key))) throw new IdempotencyKeyInUseError();
      const now = this.clock.now();
      const existing = await this.store.find(owner, key, now);
      if (existing) {
        if (existing.fingerprint !== fingerprint) {
          if (existing.fingerprint === request.withheldFingerprint) throw new IdempotentReplayWithheldError();
          throw new IdempotencyKeyReusedError();
        }
        if (!existing.sealed) return { replayed: true, result: existing.result };
        const json = this.sealer.open(existing.result.json, key, binding);
        if (json === null) throw new IdempotentReplayWithheldError();
        return { replayed: true, result: { ...existing.result, json } };
      }
      const result = await handle();
      const sealed = request.sealResult === true;
      const kept = sealed ? { ...result, json: this.sealer.seal(result.json, key, binding) } : result;
      await this.store.save(
        owner,
        key,
        { fingerprint, result: kept, sealed },
        new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
      );
      return { replayed: false, result };
    });
  }
}
