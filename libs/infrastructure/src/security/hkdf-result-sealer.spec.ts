import { HkdfResultSealer } from './hkdf-result-sealer';

describe('HkdfResultSealer (AES-256-GCM, key by HKDF-SHA-256 from the Idempotency-Key)', () => {
  const sealer = new HkdfResultSealer();
  const plain = JSON.stringify({ apiKey: { key: 'psk_secret-shown-once' }, account: { id: 7, name: 'Zoë' } });
  const key = '9b2f7c1e-0d4e-4a55-8f7e-3b8c2d1a6e90';
  const binding = '7\nfingerprint';

  it('opens what it sealed with the same key and binding, and the envelope does not hold the plain text', () => {
    const sealed = sealer.seal(plain, key, binding);
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('psk_secret-shown-once');
    expect(Buffer.from(sealed.slice(3), 'base64url').toString('latin1')).not.toContain('psk_');
    expect(sealer.open(sealed, key, binding)).toBe(plain);
  });

  it('seals the same text differently each time (random salt and nonce)', () => {
    const a = sealer.seal(plain, key, binding);
    const b = sealer.seal(plain, key, binding);
    expect(a).not.toBe(b);
    expect(sealer.open(b, key, binding)).toBe(plain);
  });

  it('does not open with another key, another binding, or altered bytes', () => {
    const sealed = sealer.seal(plain, key, binding);
    expect(sealer.open(sealed, `${key}x`, binding)).toBeNull();
    expect(sealer.open(sealed, key, 'anonymous\nfingerprint')).toBeNull();
    const bytes = Buffer.from(sealed.slice(3), 'base64url');
    for (const at of [0, 16, 28, bytes.length - 1]) {
      const altered = Buffer.from(bytes);
      altered[at] ^= 1;
      expect(sealer.open(`v1.${altered.toString('base64url')}`, key, binding)).toBeNull();
    }
  });

  it('refuses what is not an envelope of its version, without throwing', () => {
    for (const text of ['', 'v1.', 'v1.AAAA', 'v2.' + 'A'.repeat(80), '{"id":1}', 'v1.a.b']) {
      expect(sealer.open(text, key, binding)).toBeNull();
    }
  });

  it('seals an empty result and one with every kind of character', () => {
    for (const text of ['', '"\u0000\u2028😀"'])
      expect(sealer.open(sealer.seal(text, key, binding), key, binding)).toBe(text);
  });
});
