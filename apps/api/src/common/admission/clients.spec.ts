import type { IncomingMessage } from 'node:http';
import type { ApiKeySecrets, VerifiedKey, VerifiedKeyCache } from '@petstore/application';
import { admissionClients } from './clients';

/** A key cache holding one customer's key and one administrator's, by the fake secrets' "hash" (`h:<key>`). */
const cached = new Map<string, VerifiedKey>([
  ['h:psk_customer', { account: { id: 7, isAdmin: false }, keyId: 1, scopes: [], expiresAt: null } as never],
  ['h:psk_admin', { account: { id: 1, isAdmin: true }, keyId: 2, scopes: [], expiresAt: null } as never],
]);
const keys = { get: (hash: string) => cached.get(hash) ?? null } as unknown as VerifiedKeyCache;
const secrets = { describe: (key: string) => ({ prefix: key.slice(0, 8), hash: `h:${key}` }) } as ApiKeySecrets;

function request(headers: Record<string, string>, remoteAddress = '10.0.0.5'): IncomingMessage {
  return { headers, socket: { remoteAddress }, connection: { remoteAddress } } as unknown as IncomingMessage;
}

describe('admissionClients (who a share is counted against)', () => {
  it("a cached key's account, whatever the address; an administrator is told apart", () => {
    const clientOf = admissionClients(keys, secrets, false);
    expect(clientOf(request({ authorization: 'Bearer psk_customer' }))).toEqual({ key: 'account:7', admin: false });
    expect(clientOf(request({ authorization: 'bearer psk_customer' }, '10.9.9.9'))).toEqual({
      key: 'account:7',
      admin: false,
    });
    expect(clientOf(request({ authorization: 'Bearer psk_admin' }))).toEqual({ key: 'account:1', admin: true });
  });

  it('a key not in the cache, another scheme, or none: the address (made-up keys buy no share)', () => {
    const clientOf = admissionClients(keys, secrets, false);
    const address = { key: 'ip:10.0.0.5', admin: false };
    expect(clientOf(request({ authorization: 'Bearer psk_made-up' }))).toEqual(address);
    expect(clientOf(request({ authorization: 'Basic psk_customer' }))).toEqual(address);
    expect(clientOf(request({}))).toEqual(address);
  });

  it('TRUST_PROXY as Fastify reads it: the forwarded address only through a trusted proxy', () => {
    const forwarded = { 'x-forwarded-for': '203.0.113.9, 10.0.0.7' };
    // Not trusted: the socket's address.
    expect(admissionClients(keys, secrets, false)(request(forwarded)).key).toBe('ip:10.0.0.5');
    // One hop trusted: the last address before it.
    expect(admissionClients(keys, secrets, 1)(request(forwarded)).key).toBe('ip:10.0.0.7');
    // Every proxy trusted: the first address.
    expect(admissionClients(keys, secrets, true)(request(forwarded)).key).toBe('ip:203.0.113.9');
    // A list: the proxies in 10.0.0.0/8 are trusted.
    expect(admissionClients(keys, secrets, ['10.0.0.0/8'])(request(forwarded)).key).toBe('ip:203.0.113.9');
    expect(admissionClients(keys, secrets, ['192.0.2.1'])(request(forwarded)).key).toBe('ip:10.0.0.5');
  });
});
