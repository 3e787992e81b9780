import { createHash } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error';
import { RateLimitStore } from './rate-limit.store';

const WINDOW_MS = 60_000;
/** Probes from orchestrators are never limited. */
const UNLIMITED = /^\/health\//;

/**
 * Rate limit per API key (per client address where no key is sent), in fixed one-minute
 * windows, with the IETF RateLimit headers on every response and 429 + Retry-After past
 * the limit. If the shared store (Redis) fails, requests pass: the limit protects the
 * service, it must not take it down.
 */
export function registerRateLimit(fastify: FastifyInstance, store: RateLimitStore, perMinute: number): void {
  const logger = new Logger('RateLimit');
  const policy = `"default";q=${perMinute};w=${WINDOW_MS / 1000}`;
  fastify.addHook('onRequest', async (request, reply) => {
    if (UNLIMITED.test(request.url)) return;
    let window;
    try {
      window = await store.hit(clientOf(request), WINDOW_MS);
    } catch (error) {
      logger.warn(`Rate-limit store unavailable, request let through: ${(error as Error).message}`);
      return;
    }
    const resetIn = Math.max(1, Math.ceil(window.resetInMs / 1000));
    const remaining = Math.max(0, perMinute - window.count);
    void reply.header('RateLimit-Policy', policy).header('RateLimit', `"default";r=${remaining};t=${resetIn}`);
    if (window.count > perMinute) {
      throw new ApiError(429, 'rate_limited', `Too many requests: the limit is ${perMinute} a minute. Retry after ${resetIn} seconds.`, undefined, {
        'Retry-After': String(resetIn),
      });
    }
  });
  fastify.addHook('onClose', async () => store.close());
}

/** The API key presented (as a hash: keys never sit in memory as they are), else the address. */
function clientOf(request: FastifyRequest): string {
  const authorization = request.headers.authorization;
  const match = typeof authorization === 'string' ? /^Bearer\s+(\S+)$/i.exec(authorization) : null;
  if (match) return `key:${createHash('sha256').update(match[1]).digest('base64url')}`;
  return `ip:${request.ip}`;
}
