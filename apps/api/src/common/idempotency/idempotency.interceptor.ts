import { createHash } from 'node:crypto';
import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { CommandResult, RunIdempotently } from '@petstore/application';
import { Account, LIMITS } from '@petstore/domain';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { from, lastValueFrom, Observable } from 'rxjs';
import { ApiError } from '../errors/api-error';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
/**
 * Applies `Idempotency-Key` (docs/api.md, Idempotency) to one operation: the handler runs inside
 * RunIdempotently's transaction, and its result is kept as the JSON text this interceptor sends.
 * A replay sends that same text with the operation's own status, the created resource's
 * `Location` and `Idempotent-Replayed: true`. Without the header, nothing changes.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(private readonly runIdempotently: RunIdempotently) {}

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
    const account = request.user;
    if (!account) throw new Error('@Idempotent() needs an authenticated operation.');

    const run = async () => {
      const outcome = await this.runIdempotently.execute(
        { accountId: account.id, key, fingerprint: fingerprint(request) },
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
