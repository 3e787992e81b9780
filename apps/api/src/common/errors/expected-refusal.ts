import type { FastifyRequest } from 'fastify';

/** The requests answered with an expected refusal (ApiError.shuttingDown), by their Node request. */
const expected = new WeakSet<object>();

/**
 * Marks a request answered with a refusal that is the service working as designed (the drain's 503s): its access
 * line is `info`, not `error`, and no other line is written for it. During a drain a busy instance refuses
 * thousands of requests a second; two lines each (a warning and an error-level access line) buried the log.
 */
export function markExpectedRefusal(request: FastifyRequest): void {
  expected.add(request.raw);
}

export function isExpectedRefusal(request: FastifyRequest): boolean {
  return expected.has(request.raw);
}
