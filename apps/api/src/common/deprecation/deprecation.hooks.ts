import type { Clock } from '@petstore/application';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Sunsets } from './deprecated.decorator';
import { ApiError } from '../errors/api-error';
import { DEPRECATION_ROUTE_CONFIG, DeprecationPolicy, deprecationHeaders, successorUrl } from './deprecated.decorator';

/**
 * Enforces `@Deprecated` on the Fastify instance, keyed by the route's config, so that it covers
 * every response of the route, whichever layer answers it:
 * - `onRequest` (before authentication and validation): once the sunset has passed, 410
 *   `operation_sunset`. The sunset is read from the settings and compared with the clock at each
 *   request;
 * - `onSend` (every response, errors included): the `Deprecation`, `Sunset` and `Link` headers.
 */
export function registerDeprecationHooks(fastify: FastifyInstance, settings: Sunsets, clock: Clock): void {
  // Callback-style (a thrown error is handled like a rejection): no promise per request.
  fastify.addHook('onRequest', (request, _reply, done) => {
    const policy = policyOf(request);
    if (!policy) return done();
    const sunset = settings[policy.sunset];
    if (clock.now().getTime() >= sunset.getTime()) {
      throw new ApiError(
        410,
        'operation_sunset',
        `This operation was retired on ${sunset.toISOString()}; ` +
          `use ${successorUrl(policy, paramsOf(request))} instead.`,
      );
    }
    done();
  });

  fastify.addHook('onSend', (request, reply, payload, done) => {
    const policy = policyOf(request);
    if (policy) addHeaders(reply, deprecationHeaders(policy, settings[policy.sunset], paramsOf(request)));
    done(null, payload);
  });
}

function policyOf(request: FastifyRequest): DeprecationPolicy | undefined {
  const config = request.routeOptions.config as unknown as Record<string, unknown> | undefined;
  return config?.[DEPRECATION_ROUTE_CONFIG] as DeprecationPolicy | undefined;
}

function paramsOf(request: FastifyRequest): Record<string, string> {
  return (request.params ?? {}) as Record<string, string>;
}

/** A `Link` the handler set (a next page) is kept: link values are a comma-separated list. */
function addHeaders(reply: FastifyReply, headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) {
    const existing = name === 'Link' ? reply.getHeader('link') : undefined;
    void reply.header(name, existing ? `${String(existing)}, ${value}` : value);
  }
}
