/** Where the orchestrator's probes live (`/health/live`, `/health/ready`). */
export const HEALTH_PATH_PREFIX = '/health/';

/**
 * Whether a request (its URL, or a route's path) is a health probe: probes are never rate-limited, refused by the
 * drain, traced, or described as limited, so that an orchestrator always learns the truth. The one rule for all.
 */
export function isHealthProbe(url: string | undefined): boolean {
  return (url ?? '').startsWith(HEALTH_PATH_PREFIX);
}
