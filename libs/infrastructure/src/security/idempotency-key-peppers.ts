import { createHash, createHmac } from 'node:crypto';

/**
 * The optional per-deployment pepper of Idempotency-Keys (IDEMPOTENCY_KEY_PEPPER; issue 36, 5d). Without one, a key
 * is kept as its plain SHA-256 and a sealed result is keyed by the Idempotency-Key alone, so a copy of the database
 * can test guessable keys (`order-1`, `signup-2`) against `key_hash` and open the results sealed under them. With
 * one, a key is kept as its HMAC-SHA-256 under the pepper and the pepper enters the sealing key too: the copy tests
 * nothing without the pepper, which lives in the environment, not in the database.
 *
 * Several peppers, newest first: the first keeps and seals new records; the others, and the plain SHA-256 of the
 * records kept before any pepper, are still looked up and opened, so that setting or rotating the pepper keeps every
 * record of the last 24 hours (no schema change: `key_hash` holds either form). Drop an old pepper 24 hours after it
 * stopped being the first.
 */
export class IdempotencyKeyPeppers {
  constructor(readonly peppers: readonly string[] = []) {}

  /** The hash a new record is kept under. */
  current(key: string): string {
    return this.peppers.length ? hmac(this.peppers[0], key) : plainHash(key);
  }

  /** Every hash a kept record of this key may be under: the current one first, then older peppers', then plain. */
  candidates(key: string): string[] {
    if (!this.peppers.length) return [plainHash(key)];
    return [...this.peppers.map((pepper) => hmac(pepper, key)), plainHash(key)];
  }
}

function hmac(pepper: string, key: string): string {
  return createHmac('sha256', pepper).update(key, 'utf8').digest('hex');
}

/** The key as kept without a pepper: its SHA-256 in hex (the migration computed the same for the keys kept before). */
export function plainHash(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}
