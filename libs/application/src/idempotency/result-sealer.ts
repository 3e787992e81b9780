/**
 * Seals a result that shows a secret (a new API key, a webhook signing secret) before it is kept under its
 * Idempotency-Key, with a key derived from the Idempotency-Key itself, which the store keeps only as a one-way hash:
 * the client that holds the key opens it on a replay; the database alone reveals nothing.
 */
export abstract class ResultSealer {
  /**
   * `binding`: what the sealed text belongs to (owner and request fingerprint); it opens only with the same one,
   * so an envelope copied to another record does not open there.
   */
  abstract seal(plain: string, key: string, binding: string): string;
  /** The plain text, or null when the envelope does not open with this key and binding (or is not one). */
  abstract open(sealed: string, key: string, binding: string): string | null;
}
