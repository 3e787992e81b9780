import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ResultSealer } from '@petstore/application';

const VERSION = 'v1';
const SALT_BYTES = 16;
const IV_BYTES = 12; // GCM's standard nonce
const TAG_BYTES = 16;
const INFO = Buffer.from('petstore idempotency result v1', 'utf8');

/**
 * AES-256-GCM, keyed per record by HKDF-SHA-256 from the Idempotency-Key text and a random salt (node:crypto; no
 * scheme of our own beyond the envelope's layout). The envelope is `v1.` + base64url(salt ‖ iv ‖ tag ‖ ciphertext);
 * the binding (owner and request fingerprint) is the additional authenticated data. The store keeps the key only
 * as its SHA-256, from which this key cannot be derived: the database alone opens nothing. As strong as the key is
 * unguessable: clients send a random UUID (docs/api.md).
 */
@Injectable()
export class HkdfResultSealer extends ResultSealer {
  seal(plain: string, key: string, binding: string): string {
    const salt = randomBytes(SALT_BYTES);
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', derive(key, salt), iv);
    cipher.setAAD(Buffer.from(binding, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    const envelope = Buffer.concat([salt, iv, cipher.getAuthTag(), ciphertext]);
    return `${VERSION}.${envelope.toString('base64url')}`;
  }

  open(sealed: string, key: string, binding: string): string | null {
    const [version, encoded, ...rest] = sealed.split('.');
    if (version !== VERSION || encoded === undefined || rest.length) return null;
    const envelope = Buffer.from(encoded, 'base64url');
    if (envelope.length < SALT_BYTES + IV_BYTES + TAG_BYTES) return null;
    const salt = envelope.subarray(0, SALT_BYTES);
    const iv = envelope.subarray(SALT_BYTES, SALT_BYTES + IV_BYTES);
    const tag = envelope.subarray(SALT_BYTES + IV_BYTES, SALT_BYTES + IV_BYTES + TAG_BYTES);
    const ciphertext = envelope.subarray(SALT_BYTES + IV_BYTES + TAG_BYTES);
    try {
      const decipher = createDecipheriv('aes-256-gcm', derive(key, salt), iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(binding, 'utf8'));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
    } catch {
      // The tag does not verify: another key or binding, or altered bytes.
      return null;
    }
  }
}

function derive(key: string, salt: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(key, 'utf8'), salt, INFO, 32));
}
