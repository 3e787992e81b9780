import { Logger } from '@nestjs/common';
import { isHealthProbe } from '../http-kit/health-probes';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ApiKeyScope, scopesGrant } from '@petstore/domain';
import { scopeFor } from '../auth/api-key.guard';
import { ApiError } from '../errors/api-error';
import type { PublicErrorCode } from '../errors/error-codes';
import { RateLimitStore, WindowCount } from './rate-limit.store';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
/**
 * Outbound webhook requests a customer can cause at will, a minute per account, on top of the general budget: a ping
 * (POST /webhooks/endpoints/{id}/test), a redelivery (POST …/deliveries/{deliveryId}/retry) and a recovery (POST
 * …/recover, however many deliveries it queues) each make this service POST to a URL the customer chose at once, so
 * they share one small budget (a person checking or catching up a receiver). Per account, not per endpoint: an
 * account has up to 10 endpoints, and per endpoint would multiply it. Deliveries of events are not counted here: the
 * events' own changes are what the general budget limits.
 */
export const WEBHOOK_OUTBOUND_PER_MINUTE = 5;
/** Charged here, with the request's other budgets. */
const WEBHOOK_OUTBOUND_ROUTES = new Set(['/webhooks/endpoints/:endpointId/test']);
/**
 * Charged by the handler once it knows it sends something (chargeWebhookOutbound, in its transaction): a redelivery
 * of a delivery whose attempt is queued already (409 `delivery_pending`), or a request refused for its input or an
 * endpoint not found, spends nothing.
 */
const WEBHOOK_OUTBOUND_ROUTES_CHARGED_BY_HANDLER = new Set([
  '/webhooks/endpoints/:endpointId/deliveries/:deliveryId/retry',
  '/webhooks/endpoints/:endpointId/recover',
]);

/** The outbound budget a request of those routes spends when its handler says so; nothing for other requests. */
const chargesLeft = new WeakMap<FastifyRequest, () => Promise<void>>();

/**
 * Spends one unit of the account's outbound webhook budget for this request (a redelivery, a recovery), or throws
 * `429 rate_limited` with `Retry-After` past it; the response's RateLimit headers then name that budget too. Called
 * at most once a request (a second call spends nothing); a no-op where rate limits are off
 * (RATE_LIMIT_PER_MINUTE=0) or for a request that does not spend it.
 */
export async function chargeWebhookOutbound(request: FastifyRequest): Promise<void> {
  const charge = chargesLeft.get(request);
  if (!charge) return;
  chargesLeft.delete(request);
  await charge();
}

export interface RateLimits {
  /** Requests a minute per verified account, or per client address without one (RATE_LIMIT_PER_MINUTE). */
  perMinute: number;
  /** Sign-ups an hour per client address (SIGNUP_LIMIT_PER_HOUR). */
  signUpsPerHour: number;
  /** Requests a minute per client address whose credentials do not authenticate (AUTH_FAILURE_LIMIT_PER_MINUTE). */
  authFailuresPerMinute: number;
}

/** Who a request comes from: the account its key verified, else nobody (`null`). */
export type Authenticator = (request: FastifyRequest) => Promise<{
  account: { id: number; createdAt: Date } | null;
  key?: { keyId: number; scopes: readonly ApiKeyScope[] };
}>;

/** A budget: its IETF policy name, size and window, and what a refusal says. Fixed for the process. */
interface Policy {
  name: string;
  limit: number;
  windowMs: number;
  /** Its item of the RateLimit-Policy header. */
  header: string;
  refusal: string;
  /** The code of its 429: `rate_limited`, or `too_many_auth_failures` where waiting cannot help. */
  code: PublicErrorCode;
}

/** A budget applied to one client (an account, an address). */
interface Bucket {
  policy: Policy;
  client: string;
}

function policy(
  name: string,
  limit: number,
  windowMs: number,
  refusal: string,
  code: PublicErrorCode = 'rate_limited',
): Policy {
  return { name, limit, windowMs, header: `"${name}";q=${limit};w=${windowMs / 1000}`, refusal, code };
}

/**
 * Rate limits in fixed windows, with the IETF RateLimit headers on every response and 429 +
 * Retry-After past a limit:
 * - every request counts against the account its key verified, or, with a missing, unknown or
 *   revoked key, against the client address (`request.ip`, which TRUST_PROXY decides): made-up
 *   keys buy nothing;
 * - a request whose Authorization header does not authenticate also counts against the address's
 *   failed authentications, a stricter budget (key guessing);
 * - sign-up (POST /accounts) also counts against the address's sign-ups an hour;
 * - a webhook ping also counts against the account's outbound budget (WEBHOOK_OUTBOUND_PER_MINUTE), and so do a
 *   redelivery and a recovery, charged by their handlers once they send (chargeWebhookOutbound): a redelivery answered
 *   409 `delivery_pending` spends nothing of it;
 * - a request the key's scope does not allow (a `read` key's write: the guard answers 403) counts against that key
 *   alone, never the account's budgets;
 * - a `304 Not Modified` is charged like any answer: conditional.hooks.ts decides it from the body's tag, after the
 *   handler ran its query. GitHub makes conditional requests free where deciding them is cheap; here it never is,
 *   and the refund made any filter matching nothing (an empty list's tag is a constant) free (issue 48, item 5).
 * The key is verified here once; the guard reuses the outcome. If the shared store (Redis) does not answer, the
 * process counts alone (RedisRateLimitStore); a store that throws all the same lets the request pass: the limit
 * protects the service, it must not take it down.
 */
export function registerRateLimit(
  fastify: FastifyInstance,
  store: RateLimitStore,
  limits: RateLimits,
  authenticate: Authenticator,
): void {
  const logger = new Logger('RateLimit');
  const policies: Policies = {
    default: policy(
      'default',
      limits.perMinute,
      MINUTE_MS,
      `Too many requests: the limit is ${limits.perMinute} a minute.`,
    ),
    authFailures: policy(
      'auth-failures',
      limits.authFailuresPerMinute,
      MINUTE_MS,
      `Too many failed authentications from this address: the limit is ${limits.authFailuresPerMinute} a minute.`,
      // Its own code: the credentials did not authenticate, so a client that waits and sends them again gets 401 at
      // best. A client's retry stops here (libs/client), where it would wait for `rate_limited`.
      'too_many_auth_failures',
    ),
    signUp: policy(
      'sign-up',
      limits.signUpsPerHour,
      HOUR_MS,
      `Too many sign-ups from this address: the limit is ${limits.signUpsPerHour} an hour.`,
    ),
    webhookOutbound: policy(
      'webhook-outbound',
      WEBHOOK_OUTBOUND_PER_MINUTE,
      MINUTE_MS,
      `Too many webhook pings, redeliveries and recoveries: the limit is ${WEBHOOK_OUTBOUND_PER_MINUTE} a minute per ` +
        'account.',
    ),
  };
  fastify.addHook('onRequest', async (request, reply) => {
    if (isHealthProbe(request.url)) return; // probes from orchestrators are never limited
    const { buckets, chargedByHandler } = await bucketsOf(request, policies, authenticate);
    let counts: WindowCount[];
    try {
      counts =
        buckets.length === 1
          ? [await store.hit(buckets[0].client, buckets[0].policy.windowMs)]
          : await Promise.all(buckets.map((bucket) => store.hit(bucket.client, bucket.policy.windowMs)));
    } catch (error) {
      logger.warn(`Rate-limit store unavailable, request let through: ${(error as Error).message}`);
      return;
    }
    // A refusal names the failed-authentications budget when it is exceeded (its code tells a client that waiting
    // cannot help), else the first budget exceeded, and the longest wait among those exceeded.
    let exceeded = -1;
    let wait = 0;
    for (let i = 0; i < buckets.length; i++) {
      if (counts[i].count > buckets[i].policy.limit) {
        if (exceeded === -1 || buckets[i].policy === policies.authFailures) exceeded = i;
        wait = Math.max(wait, resetIn(counts[i]));
      }
    }
    setHeaders(reply, buckets, counts);
    if (exceeded !== -1) refuse(buckets[exceeded].policy, wait);
    if (chargedByHandler) {
      const counted = counts;
      chargesLeft.set(request, async () => {
        let count: WindowCount;
        try {
          count = await store.hit(chargedByHandler.client, chargedByHandler.policy.windowMs);
        } catch (error) {
          logger.warn(`Rate-limit store unavailable, request let through: ${(error as Error).message}`);
          return;
        }
        setHeaders(reply, [...buckets, chargedByHandler], [...counted, count]);
        if (count.count > chargedByHandler.policy.limit) refuse(chargedByHandler.policy, resetIn(count));
      });
    }
  });
  fastify.addHook('onClose', async () => store.close());
}

/** The 429 of a budget exceeded, with the wait until its window resets. */
function refuse({ refusal, code }: Policy, wait: number): never {
  const message = `${refusal} Retry after ${wait} seconds.`;
  throw new ApiError(429, code, message, undefined, { 'Retry-After': String(wait) });
}

/**
 * RateLimit reports the policy closest to its limit (the first of equals); RateLimit-Policy lists every one applied.
 */
function setHeaders(reply: FastifyReply, buckets: Bucket[], counts: WindowCount[]): void {
  let policyHeader = '';
  let closest = -1;
  let closestRemaining = 0;
  for (let i = 0; i < buckets.length; i++) {
    const remaining = Math.max(0, buckets[i].policy.limit - counts[i].count);
    policyHeader = i === 0 ? buckets[i].policy.header : `${policyHeader}, ${buckets[i].policy.header}`;
    if (closest === -1 || remaining < closestRemaining) {
      closest = i;
      closestRemaining = remaining;
    }
  }
  void reply
    .header('RateLimit-Policy', policyHeader)
    .header('RateLimit', `"${buckets[closest].policy.name}";r=${closestRemaining};t=${resetIn(counts[closest])}`);
}

interface Policies {
  default: Policy;
  authFailures: Policy;
  signUp: Policy;
  webhookOutbound: Policy;
}

/** Whole seconds until the window resets, at least 1. */
function resetIn(count: WindowCount): number {
  return Math.max(1, Math.ceil(count.resetInMs / 1000));
}

/** The budgets a request counts against now, and the one its handler charges when it sends (chargeWebhookOutbound). */
async function bucketsOf(
  request: FastifyRequest,
  policies: Policies,
  authenticate: Authenticator,
): Promise<{ buckets: Bucket[]; chargedByHandler?: Bucket }> {
  const address = request.ip;
  let account: { id: number; createdAt: Date } | null = null;
  let key: { keyId: number; scopes: readonly ApiKeyScope[] } | undefined;
  let unverified = false;
  try {
    ({ account, key } = await authenticate(request));
  } catch {
    // A failure to verify (database down) counts against the address; the guard reports the failure.
    unverified = true;
  }
  const buckets: Bucket[] = [];
  let chargedByHandler: Bucket | undefined;
  if (account && key && !scopesGrant(key.scopes, scopeFor(request.method))) {
    // A key whose scope the method exceeds (a `read` key sending a write) is refused by the guard (403): its requests
    // count against the key alone, not the account's budgets (its webhook budget included), so a leaked read-only key
    // cannot spend what the account's other keys live on.
    buckets.push({ policy: policies.default, client: `key:${key.keyId}:${account.createdAt.getTime()}` });
  } else if (account) {
    // Account ids restart in every database; the creation time keeps apart deployments sharing one Redis.
    const client = `account:${account.id}:${account.createdAt.getTime()}`;
    buckets.push({ policy: policies.default, client });
    const route = request.method === 'POST' ? (request.routeOptions.url ?? '') : '';
    const outbound = { policy: policies.webhookOutbound, client: `webhook-outbound:${client}` };
    if (WEBHOOK_OUTBOUND_ROUTES.has(route)) buckets.push(outbound);
    else if (WEBHOOK_OUTBOUND_ROUTES_CHARGED_BY_HANDLER.has(route)) chargedByHandler = outbound;
  } else {
    buckets.push({ policy: policies.default, client: `ip:${address}` });
    if (request.headers.authorization !== undefined && !unverified) {
      buckets.push({ policy: policies.authFailures, client: `auth-failures:${address}` });
    }
  }
  if (request.method === 'POST' && request.routeOptions.url === '/accounts') {
    buckets.push({ policy: policies.signUp, client: `sign-up:${address}` });
  }
  return chargedByHandler ? { buckets, chargedByHandler } : { buckets };
}
