import { createHash } from 'node:crypto';
import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { CommandResult, RunIdempotently } from '@petstore/application';
import { Account, LIMITS } from '@petstore/domain';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { from, lastValueFrom, Observable } from 'rxjs';
import { ApiError } from '../errors/api-error';
import { SHOWS_SECRET } from './idempotency.decorators';

export const IDEMPOTENCY_HEADER = 'idempotency-key';

/**
 * Applies `Idempotency-Key` (docs/api.md, Idempotency) to an operation; every POST has it (applyIdempotencyToPosts,
 * at start-up), so an operation added later has it without asking; one marked `@NotIdempotent(reason)` does not.
 * The handler runs inside RunIdempotently's transaction, and its result is kept
 * as the JSON text this interceptor sends (sealed when the handler is `@ShowsSecret()`). A replay sends that same
 * text with the operation's own status, the created resource's `Location` and `Idempotent-Replayed: true`.
 * Without the header, nothing changes.
 *
 * Scope: the calling account; for an operation without an API key (the guard sets `user` on every operation that
 * needs one, and only there), no account: such keys are one space, told apart by the key alone.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  /** Whether each handler shows a secret, read once (decorators do not change at run time). */
  private readonly showsSecret = new WeakMap<object, boolean>();

  constructor(
    private readonly runIdempotently: RunIdempotently,
    private readonly reflector: Reflector,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest & { user?: Account }>();
    const reply = http.getResponse<FastifyReply>();
    const key = request.headers[IDEMPOTENCY_HEADER];
    if (key === undefined) return next.handle();
    if (typeof key !== 'string' || key.length < LIMITS.idempotencyKey.min || key.length > LIMITS.idempotencyKey.max) {
      throw ApiError.validation(
        `Idempotency-Key must be ${LIMITS.idempotencyKey.min} to ${LIMITS.idempotencyKey.max} characters.`,
        [
          {
            field: 'Idempotency-Key',
            message: `must be ${LIMITS.idempotencyKey.min} to ${LIMITS.idempotencyKey.max} characters`,
          },
        ],
      );
    }

    const run = async () => {
      const outcome = await this.runIdempotently.execute(
        {
          accountId: request.user?.id ?? null,
          key,
          fingerprint: fingerprint(request),
          sealResult: this.showsSecretOf(context),
        },
        async (): Promise<CommandResult> => {
          const body: unknown = await lastValueFrom(next.handle(), { defaultValue: undefined });
          const location = reply.getHeader('location');
          // Serialized once, here: the first response and every replay send this very text.
          return { json: JSON.stringify(body) ?? '', createdResource: typeof location === 'string' ? location : null };
        },
      );
      const { json, createdResource } = outcome.result;
      if (outcome.replayed) {
        void reply.header('Idempotent-Replayed', 'true');
        if (createdResource !== null) void reply.header('Location', createdResource);
      }
      if (!json) return undefined;
      // A string with a JSON content type is sent as it is (Fastify serializes only objects).
      void reply.type('application/json; charset=utf-8');
      return json;
    };
    return from(run());
  }

  private showsSecretOf(context: ExecutionContext): boolean {
    const handler = context.getHandler();
    let shows = this.showsSecret.get(handler);
    if (shows === undefined) {
      shows = this.reflector.getAllAndOverride<boolean>(SHOWS_SECRET, [handler, context.getClass()]) === true;
      this.showsSecret.set(handler, shows);
    }
    return shows;
  }
}

/** What makes two requests "the same": method, path and body (key order ignored). */
function fingerprint(request: FastifyRequest): string {
  return createHash('sha256')
    .update(`${request.method} ${request.url}\n${canonicalJson(request.body)}`)
    .digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
