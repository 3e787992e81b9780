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

/**
 * Whose key it is: the calling account's id, or null for an operation that needs no API key (`POST /accounts`),
 * whose keys are one space of their own, told apart by the key alone (docs/api.md, Idempotency).
 */
export type IdempotencyOwner = number | null;

export interface IdempotencyRecord {
  fingerprint: string;
  /** The result; when `sealed`, its `json` is the sealed envelope (ResultSealer), not the JSON text. */
  result: CommandResult;
  sealed: boolean;
}

/**
 * Idempotency keys, per owner. Every method runs inside the caller's transaction (UnitOfWork), so a key is
 * recorded together with the effect of the request it belongs to, or not at all. A store keeps no key as the
 * client sent it (a one-way hash): a sealed result is opened with a key derived from that text.
 */
export abstract class IdempotencyStore {
  /**
   * Takes the key for the rest of the transaction without waiting. False when another
   * request holding the same key is still running.
   */
  abstract tryLock(owner: IdempotencyOwner, key: string): Promise<boolean>;
  /** The unexpired record of a completed request, if any. */
  abstract find(owner: IdempotencyOwner, key: string, now: Date): Promise<IdempotencyRecord | null>;
  abstract save(owner: IdempotencyOwner, key: string, record: IdempotencyRecord, expiresAt: Date): Promise<void>;
  /** Deletes expired records; returns how many. */
  abstract purgeExpired(now: Date): Promise<number>;
}
