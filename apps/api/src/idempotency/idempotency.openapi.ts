import { LIMITS } from '@petstore/domain';
import { NOT_IDEMPOTENT_EXTENSION, SHOWS_SECRET_EXTENSION } from './idempotency.decorators';

type Response = { description: string; content?: unknown };
type Operation = {
  parameters?: Array<{ in: string; name?: string; schema?: Record<string, unknown> }>;
  responses: Record<string, Response>;
  [extension: `x-${string}`]: unknown;
};

const HEADER_DESCRIPTION =
  'Makes the request safe to retry: the same key with the same body returns the first response again ' +
  '(with `Idempotent-Replayed: true`) for 24 hours. Only successful responses are kept; a failed request ' +
  'leaves no trace and may be retried with the same key. Send a new random key (a UUID) per operation.';
const SEALED =
  ' The response shows a secret: it is kept sealed with a key derived from this header, which the service keeps ' +
  'only as a hash, so treat the key as secret until it expires.';
const ANSWERS = {
  409: 'A request with the same Idempotency-Key is still running (`idempotency_key_in_use`).',
  sealed409:
    'The kept response to this Idempotency-Key (it shows a secret, kept sealed) cannot be opened ' +
    '(`idempotency_replay_withheld`); nothing was done twice.',
  422: 'The Idempotency-Key was used with a different request (`idempotency_key_reused`).',
};
const ERROR_CONTENT = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };

/**
 * The description's side of the rule applyIdempotencyToWrites applies: a POST, PATCH or DELETE, unless marked exempt
 * (with its reason), takes the `Idempotency-Key` header and may answer 409 `idempotency_key_in_use` and 422
 * `idempotency_key_reused` (and 409 `idempotency_replay_withheld` when its result shows a secret), added to its own
 * answers of those statuses.
 */
export function describeIdempotency(operation: Operation): void {
  if (operation[NOT_IDEMPOTENT_EXTENSION] !== undefined) return;
  const sealed = operation[SHOWS_SECRET_EXTENSION] === true;
  const parameters = (operation.parameters ??= []);
  if (!parameters.some((p) => p.in === 'header' && p.name === 'Idempotency-Key')) {
    parameters.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description: HEADER_DESCRIPTION + (sealed ? SEALED : ''),
      schema: { type: 'string', minLength: LIMITS.idempotencyKey.min, maxLength: LIMITS.idempotencyKey.max },
    } as (typeof parameters)[number]);
  }
  const add = (status: number, description: string) => {
    const own = operation.responses[status];
    if (!own) operation.responses[status] = { description, content: ERROR_CONTENT };
    else if (!own.description.includes(description)) {
      operation.responses[status] = { ...own, description: `${own.description}\n\n${description}` };
    }
  };
  add(409, sealed ? `${ANSWERS[409]} ${ANSWERS.sealed409}` : ANSWERS[409]);
  add(422, ANSWERS[422]);
}
