export interface GeneratedApiKey {
  /** The whole secret, shown to the client once. */
  key: string;
  /** Its readable start (`psk_…`), stored and shown in listings. */
  prefix: string;
  /** What is stored instead of the key. */
  hash: string;
}

/** Making and checking API key secrets (randomness and hashing live in infrastructure). */
export abstract class ApiKeySecrets {
  abstract generate(): GeneratedApiKey;
  /** Prefix and hash of a presented key (a Bearer credential, the bootstrap ADMIN_API_KEY). */
  abstract describe(key: string): Omit<GeneratedApiKey, 'key'>;
}
