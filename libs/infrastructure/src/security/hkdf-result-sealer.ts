import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { Injectable, Optional } from '@nestjs/common';
import { ResultSealer } from '@petstore/application';
import { IdempotencyKeyPeppers } from './idempotency-key-peppers';

/** `v1`: keyed by the Idempotency-Key alone; `v2`: by the key under a pepper (IDEMPOTENCY_KEY_PEPPER). */
const VERSION = 'v1';
const PEPPERED = 'v2';
const SALT_BYTES = 16;
const IV_BYTES = 12; // GCM's standard nonce
const TAG_BYTES = 16;
const INFO = Buffer.from('petstore idempotency result v1', 'utf8');

/**
 * AES-256-GCM, keyed per record by HKDF-SHA-256 from the Idempotency-Key text and a random salt (node:crypto; no
 * scheme of our own beyond the envelope's layout). The envelope is `v1.` + base64url(salt ‖ iv ‖ tag ‖ ciphertext);
 * the binding (owner and request fingerprint) is the additional authenticated data. The store keeps the key only
 * as its SHA-256, from which this key cannot be derived: the database alone opens nothing. As strong as the key is
 * unguessable: clients send a random UUID (docs/api.md). With a pepper (IdempotencyKeyPeppers), the input keying
 * material is the key's HMAC under the first pepper and the envelope is `v2.`: a guessed key alone opens nothing
 * (nor can the GCM tag be used to test guesses offline). A `v2` envelope opens under any configured pepper, a `v1`
 * one as before, so records sealed before a pepper was set or rotated still open.
 */
@Injectable()
export class HkdfResultSealer extends ResultSealer {
  constructor(@Optional() private readonly peppers: IdempotencyKeyPeppers = new IdempotencyKeyPeppers()) {
    super();
  }

  seal(plain: string, key: string, binding: string): string {
    const salt = randomBytes(SALT_BYTES);
    const iv = randomBytes(IV_BYTES);
    const pepper = this.peppers.peppers[0];
    const material = pepper === undefined ? key : peppered(pepper, key);
    const cipher = createCipheriv('aes-256-gcm', derive(material, salt), iv);
    cipher.setAAD(Buffer.from(binding, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    const envelope = Buffer.concat([salt, iv, cipher.getAuthTag(), ciphertext]);
    return `${pepper === undefined ? VERSION : PEPPERED}.${envelope.toString('base64url')}`;
  }

  open(sealed: string, key: string, binding: string): string | null {
    const [version, encoded, ...rest] = sealed.split('.');
    if (encoded === undefined || rest.length) return null;
    if (version === VERSION) return openWith(encoded, key, binding);
    if (version !== PEPPERED) return null;
    for (const pepper of this.peppers.peppers) {
      const plain = openWith(encoded, peppered(pepper, key), binding);
      if (plain !== null) return plain;
    }
    return null;
  }
}

/** Opens an envelope's body with the key material it was sealed with; null when it does not open. */
function openWith(encoded: string, material: string, binding: string): string | null {
  const envelope = Buffer.from(encoded, 'base64url');
  if (envelope.length < SALT_BYTES + IV_BYTES + TAG_BYTES) return null;
  const salt = envelope.subarray(0, SALT_BYTES);
  const iv = envelope.subarray(SALT_BYTES, SALT_BYTES + IV_BYTES);
  const tag = envelope.subarray(SALT_BYTES + IV_BYTES, SALT_BYTES + IV_BYTES + TAG_BYTES);
  const ciphertext = envelope.subarray(SALT_BYTES + IV_BYTES + TAG_BYTES);
  try {
    const decipher = createDecipheriv('aes-256-gcm', derive(material, salt), iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(binding, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch {
    // The tag does not verify: another key or binding, or altered bytes.
    return null;
  }
}

function derive(material: string, salt: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(material, 'utf8'), salt, INFO, 32));
}

/** The key material under a pepper: the key's HMAC-SHA-256 (hex), distinct from the hash `key_hash` keeps. */
function peppered(pepper: string, key: string): string {
  return createHmac('sha256', pepper).update(`seal\n${key}`, 'utf8').digest('hex');
}
