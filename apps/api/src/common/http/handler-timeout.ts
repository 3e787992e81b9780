import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Logger } from '@nestjs/common';
import { StoreUnavailableError, WorkScope } from '@petstore/application';
import { ApiError } from '../errors/api-error';
import { requestLabel, writeError } from '../errors/global-exception.filter';
import { toErrorResponse } from '../errors/error-response';

const timeoutLogger = new Logger('Timeouts');

/**
 * The work scope of each request (`registerHandlerTimeout` enters it): what `cutOff` stops. A property of the request
 * rather than a WeakMap keyed by it: an entry per request is one more weak entry for the collector to trace.
 */
const SCOPE = Symbol('workScope');
type ScopedRequest = FastifyRequest & { [SCOPE]?: WorkScope };

/**
 * A request not answered within `ms` gets 503 and is cut off (`cutOff`): its transaction never commits after that
 * answer, so a 503 `service_unavailable` means "not done" and is safe to repeat. Hand-written rather than Fastify's
 * `handlerTimeout`: in Fastify 5.11 that timer is cleared as soon as a request body has been read
 * (fastify/fastify#6725), so it never fires for POST, PUT or PATCH. The response's `close` event, used here, fires
 * only once the response is sent or the connection is gone.
 *
 * A request whose body is still arriving then has not reached its handler at all: the client is late, not the
 * service. It gets 408 `request_timeout` (what Node answers at `HTTP_REQUEST_TIMEOUT_MS`, which with the same
 * value would come up to a second after this timer, Node checking once a second) and the connection is closed,
 * the rest of the body unread; the log line says so, at info (a slow client is no alert).
 */
export function registerHandlerTimeout(fastify: FastifyInstance, ms: number): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    // The request's scope, entered by the access log's hook (one AsyncLocalStorage for both); a new one without it.
    const entered = WorkScope.current();
    const scope = entered ?? new WorkScope(request.id);
    (request as ScopedRequest)[SCOPE] = scope;
    const timer = setTimeout(() => {
      if (reply.sent) return;
      if (!request.raw.complete) {
        timeoutLogger.log(`Request body not received within ${ms} ms on ${requestLabel(request)}: 408`);
        void reply.header('Connection', 'close');
        const late = new ApiError(408, 'request_timeout', 'The request body was not received in time.');
        const { body, headers } = toErrorResponse(late);
        writeError(body, headers, request, reply);
        return;
      }
      const status = cutOff(request, reply, `not answered within ${ms} ms`, 5);
      timeoutLogger.warn(`Handler timeout on ${requestLabel(request)}: not answered within ${ms} ms, ${status}`);
    }, ms);
    reply.raw.once('close', () => clearTimeout(timer));
    // The handler and everything it starts run in the scope: TransactionHost reads it before each statement.
    if (entered) done();
    else WorkScope.run(scope, done);
  });
}

/**
 * Gives up on a request that has not been answered (the handler timeout, the shutdown deadline): its work may not
 * commit from now on (the next statement it sends fails, and its transaction rolls back), and it is answered 503
 * now, which also writes its access line. If its COMMIT is already on its way, what happened is not known: a write
 * (not GET or HEAD) gets `outcome_unknown` (retry with the same Idempotency-Key), else `service_unavailable`.
 * Returns what was answered.
 */
export function cutOff(request: FastifyRequest, reply: FastifyReply, why: string, retryAfterSeconds: number): string {
  const scope = (request as ScopedRequest)[SCOPE];
  if (scope) scope.cutOff ??= new StoreUnavailableError('timeout', `Cut off (${why}): rolled back, not committed.`);
  const write = request.method !== 'GET' && request.method !== 'HEAD';
  const error =
    write && scope && scope.commitsInFlight > 0
      ? ApiError.outcomeUnknown(
          'The request took too long and its outcome is not known: retry with the same Idempotency-Key, ' +
            'or read the resource first.',
          retryAfterSeconds,
        )
      : ApiError.serviceUnavailable(
          'The request took too long and was not done; try again shortly.',
          retryAfterSeconds,
        );
  const { body, headers } = toErrorResponse(error);
  writeError(body, headers, request, reply);
  return `503 ${body.code}`;
}
