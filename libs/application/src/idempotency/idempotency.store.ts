/** A response kept under an Idempotency-Key, to be sent again to a retry. */
export interface StoredResponse {
  status: number;
  body: unknown;
  /** Headers that belong to the result (Location), replayed as they were. */
  headers: Record<string, string>;
}

export interface IdempotencyRecord {
  fingerprint: string;
  response: StoredResponse;
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
