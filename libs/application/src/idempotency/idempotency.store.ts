/**
 * What a completed command returned, kept under its Idempotency-Key so that a retry gets it again.
 * No transport detail: how it is answered (status, headers) is the caller's business.
 */
export interface CommandResult {
  /**
   * The command's result serialized as JSON text. Kept as that very text (not re-encoded), so the
   * result given to a retry is the same bytes as the first one.
   */
  json: string;
  /** The resource the command created (its path, e.g. `/store/orders/7`), or null if none. */
  createdResource: string | null;
}

export interface IdempotencyRecord {
  fingerprint: string;
  result: CommandResult;
}

/**
 * Idempotency keys, scoped to an account. Every method runs inside the caller's
 * transaction (UnitOfWork), so a key is recorded together with the effect of the
 * request it belongs to, or not at all.
 */
export abstract class IdempotencyStore {
  /**
   * Takes the key for the rest of the transaction without waiting. False when another
   * request holding the same key is still running.
   */
  abstract tryLock(accountId: number, key: string): Promise<boolean>;
  /** The unexpired record of a completed request, if any. */
  abstract find(accountId: number, key: string, now: Date): Promise<IdempotencyRecord | null>;
  abstract save(accountId: number, key: string, record: IdempotencyRecord, expiresAt: Date): Promise<void>;
  /** Deletes expired records; returns how many. */
  abstract purgeExpired(now: Date): Promise<number>;
}
