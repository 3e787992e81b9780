import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';

/**
 * Adds to the Fastify route's config (`request.routeOptions.config`) where the hooks find a route's policy. Unlike
 * Nest's `@RouteConfig`, which replaces the whole config, it keeps what another decorator put there: one route may be
 * both `@Deprecated` and `@Conditional`.
 */
export function MergeRouteConfig(config: Record<string, unknown>): MethodDecorator {
  return (_target, _key, descriptor) => {
    const handler = descriptor.value as object;
    const existing = Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) as Record<string, unknown> | undefined;
    Reflect.defineMetadata(FASTIFY_ROUTE_CONFIG_METADATA, { ...existing, ...config }, handler);
    return descriptor;
  };
}
