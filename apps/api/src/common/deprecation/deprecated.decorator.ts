import { applyDecorators } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import type { ConfigPart } from '../../config/app-config';
import { MergeRouteConfig } from '../http-kit/route-config';

/** The sunsets are configuration (e.g. PET_BY_ID_SUNSET): the `deprecations` part of AppConfig. */
export type Sunsets = ConfigPart<'deprecations'>;

/** The settings that hold a sunset. */
export type DateSetting = { [K in keyof Sunsets]: Sunsets[K] extends Date ? K : never }[keyof Sunsets];

export interface DeprecationPolicy {
  /** When the operation was deprecated: `Deprecation: @<unix seconds>` (RFC 9745). A fixed date. */
  since: Date;
  /** The setting holding the sunset: `Sunset: <HTTP-date>` (RFC 8594); from then on, 410 `operation_sunset`. */
  sunset: DateSetting;
  /**
   * The replacement's URL from the request's path parameters (given URL-encoded):
   * `Link: <…>; rel="successor-version"`.
   */
  successor: (params: Record<string, string>) => string;
}

/** The policy rides in the Fastify route's config, where the hooks find it for every request… */
export const DEPRECATION_ROUTE_CONFIG = 'petstoreDeprecation';
/** …and in a private OpenAPI extension, which `describeDeprecations` turns into `deprecated` and `x-sunset`. */
export const DEPRECATION_OPENAPI_MARKER = 'x-petstore-deprecation';

/**
 * Deprecates an operation, in one line:
 * `@Deprecated({ since: new Date('…'), sunset: 'petByIdSunset', successor: ({ petId }) => `/pets?ids=${petId}` })`.
 *
 * Every response (success or error, including the guard's 401 and the pipes' 400) carries
 * `Deprecation`, `Sunset` and `Link: <successor>; rel="successor-version"`; once the sunset has
 * passed, the operation answers 410 `operation_sunset`. The OpenAPI operation gets
 * `deprecated: true`, `x-sunset`, those headers and the 410. (Hooks: `registerDeprecationHooks`.)
 */
export function Deprecated(policy: DeprecationPolicy): MethodDecorator {
  return applyDecorators(
    MergeRouteConfig({ [DEPRECATION_ROUTE_CONFIG]: policy }),
    ApiExtension(DEPRECATION_OPENAPI_MARKER, policy),
  );
}

/** The three headers of a deprecated operation's responses. */
export function deprecationHeaders(
  policy: DeprecationPolicy,
  sunset: Date,
  params: Record<string, string>,
): Record<string, string> {
  return {
    Deprecation: `@${Math.floor(policy.since.getTime() / 1000)}`,
    Sunset: sunset.toUTCString(),
    Link: `<${successorUrl(policy, params)}>; rel="successor-version"`,
  };
}

export function successorUrl(policy: DeprecationPolicy, params: Record<string, string>): string {
  return policy.successor(
    Object.fromEntries(Object.entries(params).map(([name, value]) => [name, encodeURIComponent(value)])),
  );
}
