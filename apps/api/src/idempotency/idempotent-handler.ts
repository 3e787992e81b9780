import { createHash } from 'node:crypto';
import { CommandResult, RunIdempotently, type VerifiedKey } from '@petstore/application';
import { Account, LIMITS } from '@petstore/domain';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../common/errors/api-error';

export const IDEMPOTENCY_HEADER = 'idempotency-key';

/**
 * The property of a controller instance that holds its application's RunIdempotently: Nest injects it by property
 * (applyIdempotencyToWrites declares it), so two applications in one process each use their own.
 */
export const RUN_IDEMPOTENTLY = Symbol('petstore:run-idempotently');

/** On a wrapped handler: the handler it wraps (what marks it wrapped). */
export const IDEMPOTENT_ORIGINAL = Symbol('petstore:idempotent-original');

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a controller method, whatever its parameters
export type Handler = (...args: any[]) => unknown;
type Controller = { [RUN_IDEMPOTENTLY]?: RunIdempotently };
type AuthenticatedRequest = FastifyRequest & { user?: Account; apiKey?: VerifiedKey };

/**
 * A POST, PATCH or DELETE handler that applies `Idempotency-Key` (docs/api.md, Idempotency). Nest calls it as it called
 * the handler, after the guard and the pipes (validation first: an invalid body is a 400 whatever its key, and keeps
 * nothing), with two more arguments appended after the handler's `declaredParams` own: the request and the reply
 * (applyIdempotencyToWrites declares them). The handler gets its own arguments only.
 *
 * Without the header, the handler is called as it is, nothing more. With it, the handler runs inside RunIdempotently's
 * transaction, and its result is kept as the JSON text sent (sealed when `showsSecret`). A replay sends that same text
 * with the operation's own status, the created resource's `Location` and `Idempotent-Replayed: true`.
 *
 * Scope: the calling account; for an operation without an API key (the guard sets `user` on every operation that needs
 * one, and only there), no account: such keys are one space, told apart by the key alone.
 *
 * A result that shows a secret belongs to the API key that asked for it, not to the whole account: its request
 * (fingerprint) includes that key's id, so another key of the account presenting the same `Idempotency-Key` and body is
 * a different request (422 `idempotency_key_reused`), never a replay of the secret. Otherwise a key that expires could
 * replay another key's `POST /accounts/me/api-keys` and receive a key that outlives it, secret included (issue 36,
 * finding 3); scoping beats re-checking each operation's rules at replay, which a rule added later would have to
 * remember. A record kept by a release before this rule (fingerprint without a key id) cannot say which key made it:
 * its replay is withheld (409 `idempotency_replay_withheld`), for its remaining 24 hours.
 */
export function idempotentHandler(original: Handler, declaredParams: number, showsSecret: boolean): Handler {
  function handler(this: Controller, ...args: unknown[]): unknown {
    const request = args[declaredParams] as AuthenticatedRequest;
    const reply = args[declaredParams + 1] as FastifyReply;
    args.length = declaredParams; // our own array (rest parameters): the handler's arguments only
    const key = request.headers[IDEMPOTENCY_HEADER];
    if (key === undefined) return original.apply(this, args);
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
    const runIdempotently = this[RUN_IDEMPOTENTLY];
    if (!runIdempotently) throw new Error(`${original.name}: RunIdempotently was not injected into the controller.`);
    return runIdempotent(runIdempotently, key, request, reply, showsSecret, () => original.apply(this, args));
  }
  Object.defineProperty(handler, 'name', { value: original.name });
  Object.defineProperty(handler, IDEMPOTENT_ORIGINAL, { value: original });
  return handler;
}

async function runIdempotent(
  runIdempotently: RunIdempotently,
  key: string,
  request: AuthenticatedRequest,
  reply: FastifyReply,
  sealResult: boolean,
  call: () => unknown,
): Promise<string | undefined> {
  const ofRequest = fingerprint(request);
  // Scoped to the presenting API key when the result shows a secret (see idempotentHandler).
  const keyId = sealResult ? request.apiKey?.keyId : undefined;
  const scoped = keyId === undefined ? { fingerprint: ofRequest } : { fingerprint: fingerprint(request, keyId) };
  const outcome = await runIdempotently.execute(
    {
      accountId: request.user?.id ?? null,
      key,
      ...scoped,
      ...(keyId === undefined ? {} : { withheldFingerprint: ofRequest }),
      sealResult,
    },
    async (): Promise<CommandResult> => {
      const body: unknown = await call();
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
}

/**
 * What makes two requests "the same": method, path and body (key order ignored), and, for a result that shows a
 * secret, the API key that sent it (`keyId`).
 */
function fingerprint(request: FastifyRequest, keyId?: number): string {
  const scope = keyId === undefined ? '' : `\napi-key ${keyId}`;
  return createHash('sha256')
    .update(`${request.method} ${request.url}\n${canonicalJson(request.body)}${scope}`)
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
