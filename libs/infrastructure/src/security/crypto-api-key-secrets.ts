import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ApiKeySecrets, GeneratedApiKey } from '@petstore/application';

export const API_KEY_PREFIX = 'psk_';
/** `psk_` and the first 8 characters of the random part: enough to tell keys apart. */
const DISPLAY_PREFIX_LENGTH = API_KEY_PREFIX.length + 8;

/**
 * Keys are `psk_` + 32 random bytes in base64url (256 bits). They have so much
 * entropy that an unsalted SHA-256 is a safe, indexable hash for them: a presented key is looked up
 * by its hash directly (no comparison in application code to make constant-time).
 */
@Injectable()
export class CryptoApiKeySecrets extends ApiKeySecrets {
  generate(): GeneratedApiKey {
    const key = API_KEY_PREFIX + randomBytes(32).toString('base64url');
    return { key, ...this.describe(key) };
  }

  describe(key: string): Omit<GeneratedApiKey, 'key'> {
    return { prefix: key.slice(0, DISPLAY_PREFIX_LENGTH), hash: sha256(key) };
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
