/** Told about revoked keys, on every instance (each instance's VerifiedKeyCache). */
export interface RevocationSubscriber {
  /** These keys (by hash) were revoked somewhere: forget them. */
  revoked(hashes: readonly string[]): void;
  /**
   * Announcements may have been missed (the signal's connection was lost, or was just regained):
   * forget everything.
   */
  reset(): void;
}

/**
 * The revocation signal between instances of the service. A revoking use case announces the
 * revoked keys' hashes inside its transaction: they reach every instance's subscriber once the
 * transaction commits (not at all if it rolls back), within a second while `listening`.
 */
export abstract class KeyRevocations {
  /** Inside the revoking transaction: delivered to every instance at commit. */
  abstract announce(hashes: readonly string[]): Promise<void>;
  /** Registers this instance's subscriber. */
  abstract subscribe(subscriber: RevocationSubscriber): void;
  /**
   * Whether this instance receives announcements now. While it does not, a revocation made
   * elsewhere could go unnoticed, so nothing may be trusted that a revocation would change.
   */
  abstract get listening(): boolean;
}
