import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import type { ApiKeySecrets, VerifiedKeyCache } from '@petstore/application';
import type { TrustProxy } from '../../config/schema';
import type { Client } from './admission';

/** `Bearer <token>`, the scheme in any case (passport-http-bearer's rule). */
const BEARER = /^bearer +(\S+)\s*$/i;

/**
 * Who sends a request, as admission's shares count it, without waiting for anything: the account of a key the key
 * cache holds (one verified on this instance within API_KEY_CACHE_SECONDS, neither revoked nor expired since: a
 * SHA-256 of the key and a map lookup, about 4 µs on a busy 2-core host, 2026-11-29), else the client's address as
 * Fastify's `request.ip` has it (TRUST_PROXY honoured, through Fastify's own proxy-addr). A key not in the cache (new
 * to this instance, unknown, made up) counts against its address: made-up keys buy no share of their own, and a
 * valid one has its account's share from its second request. Authentication itself (the database on a cache miss)
 * stays after admission, in the rate limit's hook: spending it on requests about to be refused is what admission
 * saves.
 */
export function admissionClients(
  keys: VerifiedKeyCache,
  secrets: ApiKeySecrets,
  trustProxy: TrustProxy,
): (request: IncomingMessage) => Client {
  const trust = trustFunction(trustProxy);
  const addressOf = trust
    ? (request: IncomingMessage) => proxyAddr(request, trust)
    : (request: IncomingMessage) => request.socket.remoteAddress;
  return (request) => {
    const token = BEARER.exec(request.headers.authorization ?? '')?.[1];
    const verified = token === undefined ? null : keys.get(secrets.describe(token).hash);
    if (verified) return { key: `account:${verified.account.id}`, admin: verified.account.isAdmin };
    return { key: `ip:${addressOf(request)}`, admin: false };
  };
}

/** TRUST_PROXY as Fastify reads it (fastify/lib/request.js, getTrustProxyFn); null: trust no proxy. */
function trustFunction(trustProxy: TrustProxy): ((address: string, hop: number) => boolean) | null {
  if (trustProxy === false) return null;
  if (trustProxy === true) return () => true;
  if (typeof trustProxy === 'number') return (_address, hop) => hop < trustProxy;
  return proxyAddr.compile(trustProxy);
}
