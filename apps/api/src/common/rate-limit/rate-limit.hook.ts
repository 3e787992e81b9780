import { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error';
import { RateLimitStore, WindowCount } from './rate-limit.store';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
/** Probes from orchestrators are never limited. */
const UNLIMITED = /^\/health\//;

export interface RateLimits {
  /** Requests a minute per verified account, or per client address without one (RATE_LIMIT_PER_MINUTE). */
  perMinute: number;
  /** Sign-ups an hour per client address (SIGNUP_LIMIT_PER_HOUR). */
  signUpsPerHour: number;
  /** Requests a minute per client address whose credentials do not authenticate (AUTH_FAILURE_LIMIT_PER_MINUTE). */
  authFailuresPerMinute: number;
}

/** Who a request comes from: the account its key verified, else nobody (`null`). */
export type Authenticator = (request: FastifyRequest) => Promise<{ account: { id: number; createdAt: Date } | null }>;

interface Bucket {
  /** The IETF policy name. */
  policy: string;
  client: string;
  limit: number;
  windowMs: number;
  refusal: string;
}

/**
 * Rate limits in fixed windows, with the IETF RateLimit headers on every response and 429 +
 * Retry-After past a limit:
 * - every request counts against the account its key verified, or, with a missing, unknown or
 *   revoked key, against the client address (`request.ip`, which TRUST_PROXY decides): made-up
 *   keys buy nothing;
 * - a request whose Authorization header does not authenticate also counts against the address's
 *   failed authentications, a stricter budget (key guessing);
 * - sign-up (POST /accounts) also counts against the address's sign-ups an hour.
 * The key is verified here once; the guard reuses the outcome. If the shared store (Redis) fails,
 * requests pass: the limit protects the service, it must not take it down.
 */
export function registerRateLimit(
  fastify: FastifyInstance,
  store: RateLimitStore,
  limits: RateLimits,
  authenticate: Authenticator,
): void {
  const logger = new Logger('RateLimit');
  fastify.addHook('onRequest', async (request, reply) => {
    if (UNLIMITED.test(request.url)) return;
    const buckets = await bucketsOf(request, limits, authenticate);
    let counts: WindowCount[];
    try {
      counts = await Promise.all(buckets.map((bucket) => store.hit(bucket.client, bucket.windowMs)));
    } catch (error) {
      logger.warn(`Rate-limit store unavailable, request let through: ${(error as Error).message}`);
      return;
    }
    const states = buckets.map((bucket, i) => ({
      bucket,
      resetIn: Math.max(1, Math.ceil(counts[i].resetInMs / 1000)),
      remaining: Math.max(0, bucket.limit - counts[i].count),
      exceeded: counts[i].count > bucket.limit,
    }));
    // RateLimit reports the policy closest to its limit; RateLimit-Policy lists every one applied.
    const closest = states.reduce((a, b) => (b.remaining < a.remaining ? b : a));
    void reply
      .header('RateLimit-Policy', buckets.map((b) => `"${b.policy}";q=${b.limit};w=${b.windowMs / 1000}`).join(', '))
      .header('RateLimit', `"${closest.bucket.policy}";r=${closest.remaining};t=${closest.resetIn}`);
    const exceeded = states.filter((state) => state.exceeded);
    if (exceeded.length > 0) {
      const resetIn = Math.max(...exceeded.map((state) => state.resetIn));
      const message = `${exceeded[0].bucket.refusal} Retry after ${resetIn} seconds.`;
      throw new ApiError(429, 'rate_limited', message, undefined, { 'Retry-After': String(resetIn) });
    }
  });
  fastify.addHook('onClose', async () => store.close());
}

async function bucketsOf(request: FastifyRequest, limits: RateLimits, authenticate: Authenticator): Promise<Bucket[]> {
  const address = request.ip;
  const buckets: Bucket[] = [];
  // A failure to verify (database down) counts against the address; the guard reports the failure.
  const { account, unverified } = await authenticate(request).then(
    (outcome) => ({ account: outcome.account, unverified: false }),
    () => ({ account: null, unverified: true }),
  );
  if (account) {
    // Account ids restart in every database; the creation time keeps apart deployments sharing one Redis.
    buckets.push(defaultBucket(`account:${account.id}:${account.createdAt.getTime()}`, limits));
  } else {
    buckets.push(defaultBucket(`ip:${address}`, limits));
    if (request.headers.authorization !== undefined && !unverified) {
      const failures = limits.authFailuresPerMinute;
      buckets.push({
        policy: 'auth-failures',
        client: `auth-failures:${address}`,
        limit: failures,
        windowMs: MINUTE_MS,
        refusal: `Too many failed authentications from this address: the limit is ${failures} a minute.`,
      });
    }
  }
  if (request.method === 'POST' && request.routeOptions.url === '/accounts') {
    buckets.push({
      policy: 'sign-up',
      client: `sign-up:${address}`,
      limit: limits.signUpsPerHour,
      windowMs: HOUR_MS,
      refusal: `Too many sign-ups from this address: the limit is ${limits.signUpsPerHour} an hour.`,
    });
  }
  return buckets;
}

function defaultBucket(client: string, limits: RateLimits): Bucket {
  return {
    policy: 'default',
    client,
    limit: limits.perMinute,
    windowMs: MINUTE_MS,
    refusal: `Too many requests: the limit is ${limits.perMinute} a minute.`,
  };
}
