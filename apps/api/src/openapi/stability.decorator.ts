import { ApiExtension } from '@nestjs/swagger';

export type StabilityLevel = 'beta' | 'experimental';

/**
 * Marks an operation (or every operation of a controller) as not yet stable:
 * `x-stability: beta | experimental` in the OpenAPI description. Stable operations carry none.
 */
export function Stability(level: StabilityLevel): MethodDecorator & ClassDecorator {
  return ApiExtension('x-stability', level);
}
