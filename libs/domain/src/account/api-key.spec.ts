import { InvalidValueError } from '../common/domain-error';
import { LIMITS } from '../common/limits';
import { InsufficientScopeError } from './account.errors';
import { ApiKey, ApiKeyRequest, ApiKeyScope, scopesGrant } from './api-key';

const now = new Date('2026-11-25T10:00:00.000Z');
const later = (ms: number) => new Date(now.getTime() + ms);
const DAY = 86_400_000;
const issue = (request?: ApiKeyRequest, scopes?: ApiKeyScope[], expiresAt: Date | null = null) =>
  ApiKey.issue({
    id: 1,
    accountId: 7,
    prefix: 'psk_abcdefgh',
    hash: 'h'.repeat(64),
    now,
    request,
    issuer: scopes && { scopes, expiresAt },
  });

describe('ApiKey', () => {
  it('without a request: no name, full, no expiry (what every key was before scopes)', () => {
    const key = issue();
    expect(key.toSnapshot()).toMatchObject({ name: null, scopes: ['full'], expiresAt: null });
    expect(key.grants('read')).toBe(true);
    expect(key.grants('full')).toBe(true);
    expect(key.isExpiredAt(later(10 ** 12))).toBe(false);
  });

  it('a read key grants read only', () => {
    const key = issue({ scopes: ['read'] });
    expect(key.grants('read')).toBe(true);
    expect(key.grants('full')).toBe(false);
  });

  it('keeps scopes in one order without repeats', () => {
    expect(issue({ scopes: ['full', 'read', 'full'] }).scopes).toEqual(['read', 'full']);
  });

  it('refuses no scope and an unknown one (invalid, naming scopes)', () => {
    expect(() => issue({ scopes: [] })).toThrow(expect.objectContaining({ field: 'scopes', kind: 'invalid' }));
    expect(() => issue({ scopes: ['admin' as ApiKeyScope] })).toThrow(InvalidValueError);
  });

  it('trims the name and holds it to the name rules', () => {
    expect(issue({ name: '  CI  ' }).name).toBe('CI');
    expect(() => issue({ name: '   ' })).toThrow(expect.objectContaining({ field: 'name', kind: 'invalid' }));
    expect(() => issue({ name: 'x'.repeat(LIMITS.apiKeyName.max + 1) })).toThrow(InvalidValueError);
    expect(issue({ name: 'x'.repeat(LIMITS.apiKeyName.max) }).name).toHaveLength(LIMITS.apiKeyName.max);
    // The rules of every name people read: no control or bidi-override characters, one script.
    for (const name of ['CI\u202Eevil', 'bell\u0007', 'zero\u200Bwidth', 'D\u043Egs']) {
      expect(() => issue({ name })).toThrow(expect.objectContaining({ field: 'name' }));
    }
  });

  it('expires at expiresAt, the instant included', () => {
    const key = issue({ expiresAt: later(60_000) });
    expect(key.isExpiredAt(later(59_999))).toBe(false);
    expect(key.isExpiredAt(later(60_000))).toBe(true);
  });

  it('refuses an expiresAt now or past, invalid, or more than the lifetime ahead', () => {
    for (const expiresAt of [now, later(-1), new Date(Number.NaN), later(LIMITS.apiKeyLifetimeMs.max + 1)]) {
      expect(() => issue({ expiresAt })).toThrow(expect.objectContaining({ field: 'expiresAt', kind: 'invalid' }));
    }
    expect(issue({ expiresAt: later(LIMITS.apiKeyLifetimeMs.max) }).expiresAt).toEqual(
      later(LIMITS.apiKeyLifetimeMs.max),
    );
  });

  it('a key creates keys only with scopes it has itself', () => {
    expect(issue({ scopes: ['read'] }, ['full']).scopes).toEqual(['read']);
    expect(issue({ scopes: ['full'] }, ['full']).scopes).toEqual(['full']);
    expect(issue({ scopes: ['read'] }, ['read']).scopes).toEqual(['read']);
    expect(() => issue({ scopes: ['full'] }, ['read'])).toThrow(InsufficientScopeError);
    expect(() => issue(undefined, ['read'])).toThrow(
      expect.objectContaining({ kind: 'insufficient_scope', needed: 'full' }),
    );
  });

  it('a key that expires creates keys that expire no later: its expiry by default, a later one refused', async () => {
    const issuerExpiry = later(DAY);
    expect(issue({}, ['full'], issuerExpiry).expiresAt).toEqual(issuerExpiry);
    expect(issue({ expiresAt: later(60_000) }, ['full'], issuerExpiry).expiresAt).toEqual(later(60_000));
    expect(issue({ expiresAt: issuerExpiry }, ['full'], issuerExpiry).expiresAt).toEqual(issuerExpiry);
    expect(() => issue({ expiresAt: later(DAY + 1) }, ['full'], issuerExpiry)).toThrow(
      expect.objectContaining({ field: 'expiresAt', kind: 'invalid' }),
    );
    // A key that does not expire passes no expiry on.
    expect(issue({}, ['full'], null).expiresAt).toBeNull();
  });

  it('scopesGrant: full includes read, read does not include full', () => {
    expect(scopesGrant(['full'], 'read')).toBe(true);
    expect(scopesGrant(['read'], 'full')).toBe(false);
    expect(scopesGrant([], 'read')).toBe(false);
  });

  it('restore and toSnapshot do not share the scopes array', () => {
    const snapshot = issue({ scopes: ['read'] }).toSnapshot();
    const restored = ApiKey.restore(snapshot);
    snapshot.scopes.push('full');
    expect(restored.scopes).toEqual(['read']);
  });
});
