import type { INestApplication } from '@nestjs/common';
import { isHealthProbe } from '../common/http-kit/health-probes';
import { isExemptFromAdmission } from '../common/admission/admission';
import { BODY_LIMIT_BYTES } from '../common/http-kit/body-limit';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { configToken } from '../config/config.module';
import { BEARER_SCHEME } from '../common/auth/auth.decorators';
import { describeConditionalRequests } from '../common/conditional/conditional.openapi';
import { addDeprecationHeaders, describeDeprecations } from '../common/deprecation/deprecation.openapi';
import { addArraySchemas } from './array-schema';
import { addCallbacks } from './callbacks';
import { addExamples, describeSuccessResponses, unwrapSingleAllOf } from './document-quality';
import { describeErrorCodes } from './error-codes.openapi';
import { describeIdempotency } from '../idempotency/idempotency.openapi';

const ERROR_REF = { $ref: '#/components/schemas/Error' };
/**
 * The headers the server sends on many responses, declared once in `components.headers` and referenced by
 * each response that carries them.
 */
const HEADERS = {
  'X-Request-Id': {
    description: 'The request id (echoed when the request sent a sane one).',
    required: true,
    schema: { type: 'string', maxLength: 128, pattern: '^[A-Za-z0-9._:-]+$' },
  },
  'Cache-Control': {
    description: '`no-store`: no cache may keep a response of the API (they are per account, or carry a secret).',
    schema: { type: 'string', enum: ['no-store'] },
  },
  /** IETF RateLimit headers (sent while RATE_LIMIT_PER_MINUTE > 0). */
  RateLimit: {
    description: 'Requests left in the budget closest to its limit: `"<policy>";r=<remaining>;t=<seconds>`.',
    schema: { type: 'string', maxLength: 64, pattern: '^"[a-z-]+";r=\\d+;t=\\d+$' },
  },
  'RateLimit-Policy': {
    description:
      'Every budget the request counts against: `"default";q=<requests>;w=60`; on sign-up also ' +
      '`"sign-up";q=<sign-ups>;w=3600`; with credentials that do not authenticate also ' +
      '`"auth-failures";q=<requests>;w=60`.',
    schema: { type: 'string', maxLength: 160, pattern: '^"[a-z-]+";q=\\d+;w=\\d+(, "[a-z-]+";q=\\d+;w=\\d+)*$' },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying (up to an hour: the sign-up budget is hourly).',
    schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 3600 },
  },
  'WWW-Authenticate': {
    description: 'The scheme to use: `Bearer realm="petstore"`.',
    schema: { type: 'string', enum: ['Bearer realm="petstore"'] },
  },
  'Idempotent-Replayed': {
    description: '`true`: the first response to this `Idempotency-Key`, sent again (the same body, byte for byte).',
    schema: { type: 'string', enum: ['true'] },
  },
};
type SharedHeader = keyof typeof HEADERS;
const refs = (...names: SharedHeader[]) =>
  Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));

type Operation = {
  parameters?: Array<{ in: string; name?: string; schema?: Record<string, unknown> }>;
  requestBody?: unknown;
  security?: unknown[];
  responses: Record<string, { description: string; content?: unknown; headers?: Record<string, unknown> }>;
};

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setOpenAPIVersion('3.0.3')
    .setTitle('Petstore API')
    .setVersion('1.0.0')
    .setLicense('MIT', 'https://opensource.org/license/mit')
    .setDescription(
      [
        'A pet-store catalogue and ordering service: pets, their categories, customer orders and per-pet stock.',
        '',
        '**Authentication**: send `Authorization: Bearer <API_KEY>`. ' +
          '`POST /accounts` creates an account and its first key.',
        '**Errors**: every error has the `Error` shape `{code, message, status}`.',
        '**Lists** are JSON arrays, ordered by id; `limit` (1–100, default 20) and an opaque `cursor`; ' +
          'the next page is in `Link: <…>; rel="next"`.',
        '**Identifiers** are int64 integers, issued below 2^53 so that they are exact as JSON numbers.',
        '**Conditional requests**: a single resource carries `ETag`; `If-None-Match` on its `GET` answers 304 ' +
          '(not counted against the rate limit, unless earned by `*`) while it is unchanged, and `If-Match` on a ' +
          'change answers 412 `precondition_failed` when someone changed it since (so does `If-None-Match: *`).',
        '**Stability**: operations that are not yet stable carry `x-stability: beta` or `experimental`; ' +
          'deprecated ones `deprecated: true` and `x-sunset`.',
      ].join('\n'),
    )
    .addTag('accounts', 'Sign-up and API keys')
    .addTag('categories', 'Kinds of animals')
    .addTag('pets', 'The catalogue')
    .addTag('store', 'Stock and orders')
    .addTag('messages', 'The quickstart operation: messages queued for the store')
    .addTag(
      'webhooks',
      'Signed events POSTed to your URLs: endpoints, their deliveries, and the events themselves (the `event` ' +
        'callback of `createWebhookEndpoint`; their schemas `WebhookEvent`, `OrderPlacedEvent`…)',
    )
    .addTag('health', 'Liveness and readiness probes')
    .addTag('metrics', 'Prometheus metrics for operators')
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', bearerFormat: 'API key', description: 'An API key (`psk_…`).' },
      BEARER_SCHEME,
    )
    .build();
  const document = describeConditionalRequests(
    describeDeprecations(addCallbacks(SwaggerModule.createDocument(app, config)), app.get(configToken('deprecations'))),
  );
  // Relative: the deployment serving the description is the one it describes.
  const description = 'This deployment (local, staging or production): the address serving it.';
  const server = { url: '/', description, 'x-internal': false };
  document.servers = [server as NonNullable<OpenAPIObject['servers']>[number]];
  return addExamples(
    unwrapSingleAllOf(addDeprecationHeaders(addArraySchemas(describeErrorCodes(completeDocument(document))))),
  );
}

/**
 * Adds the responses every operation shares, so each operation documents every
 * status it can return: 400 (bad URL, U+0000 anywhere, invalid parameters or body), 413 with a body,
 * 401 where it needs a key, and 429, 500 and 503 everywhere.
 */
export function completeDocument(document: OpenAPIObject): OpenAPIObject {
  (document.components ??= {}).headers = { ...document.components.headers, ...HEADERS };
  for (const [route, path] of Object.entries(document.paths)) {
    const rateLimited = !isHealthProbe(route);
    for (const method of ['get', 'post', 'put', 'patch', 'delete'] as const) {
      const operation = (path as Record<string, Operation | undefined>)[method];
      if (!operation) continue;
      // Operations without @Auth say so (`security: []`): a generator then knows they need no key.
      operation.security ??= [];
      // Class- and method-level @Auth both declare the scheme: keep one requirement.
      if (operation.security.length) {
        operation.security = [...new Set(operation.security.map((s) => JSON.stringify(s)))].map((s) => JSON.parse(s));
      }
      // Every POST, PATCH and DELETE honours Idempotency-Key (applyIdempotencyToWrites's rule): its header and its
      // 409/422 answers.
      if (method === 'post' || method === 'patch' || method === 'delete') describeIdempotency(operation);
      // Path ids are int64 (ParseIdPipe): say so rather than a bare "number".
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in === 'path' && parameter.schema?.['type'] === 'number') {
          parameter.schema = { type: 'integer', format: 'int64', minimum: 1 };
        }
      }
      /** `merge`: an operation's own response of that status (400, 409) gets these codes too (a new object). */
      const add = (status: number, description: string, options: { merge?: boolean } = {}) => {
        const own = operation.responses[status];
        if (own && options.merge && !own.description.includes(description)) {
          operation.responses[status] = { ...own, description: `${own.description}\n\n${description}` };
        }
        operation.responses[status] ??= { description, content: { 'application/json': { schema: ERROR_REF } } };
      };
      // Every operation: U+0000 in any query parameter, even one it ignores,
      // or a URL that is not valid percent-encoding.
      add(
        400,
        'The request is invalid (`validation_failed`, `invalid_json`, `missing_content_type`, `bad_request`); ' +
          '`details` names each field.',
        { merge: true },
      );
      // Every write: a schema constraint no rule caught first (a concurrent change) is a 409 `conflict`.
      if (method !== 'get' && rateLimited) {
        add(409, 'A concurrent change got there first (`conflict`); read the resource again.', { merge: true });
      }
      if ((operation.parameters ?? []).some((p) => p.in === 'path')) add(404, 'No such resource (`not_found`).');
      if (operation.requestBody)
        add(413, `The body is larger than ${BODY_LIMIT_BYTES / 1024} KiB (\`payload_too_large\`).`);
      if (operation.security?.length) {
        add(
          401,
          'The API key is missing, unknown, revoked or not a Bearer credential (`unauthorized`); ' +
            'or it has expired (`api_key_expired`).',
        );
        // Every write needs a `full` key (the guard, scopeFor): a `read` key, an administrator's too, may only GET.
        if (method !== 'get') {
          add(403, 'The API key has only the `read` scope; this operation needs `full` (`insufficient_scope`).', {
            merge: true,
          });
        }
      }
      if (rateLimited) {
        add(
          429,
          'Too many requests (`rate_limited`): retry after `Retry-After` seconds; or too many failed ' +
            'authentications from this address (`too_many_auth_failures`): the key is wrong, waiting will not help.',
        );
      }
      add(500, 'Unexpected error (`internal_error`); logged with the request id.');
      // A write cut off (handler timeout, shutdown) while its COMMIT was on its way: done or not, nobody knows yet.
      add(
        503,
        (method === 'get'
          ? 'The database is unreachable or the request took too long (`service_unavailable`): nothing was done; ' +
            'retry after `Retry-After` seconds.'
          : 'The database is unreachable or the request took too long (`service_unavailable`): nothing was done; ' +
            'retry after `Retry-After` seconds. Or it was cut off while committing (`outcome_unknown`): it may ' +
            'have been done; retry with the same `Idempotency-Key`, or read first.') +
          // The admission limit refuses any operation but the probes, /metrics and the description (admission.ts).
          (isExemptFromAdmission(route)
            ? ''
            : ' Or the instance is overloaded (`overloaded`): nothing was done; retry after `Retry-After` seconds.'),
      );
      const idempotent = (operation.parameters ?? []).some((p) => p.in === 'header' && p.name === 'Idempotency-Key');
      for (const [status, response] of Object.entries(operation.responses)) {
        // A copy: decorators share one response object between operations (a class-level @Auth's 401),
        // and the headers below (and the deprecation headers after) belong to this operation only.
        operation.responses[status] = {
          ...response,
          headers: {
            ...refs('X-Request-Id', 'Cache-Control'),
            ...(rateLimited && !status.startsWith('5') ? refs('RateLimit', 'RateLimit-Policy') : {}),
            ...(status === '401' ? refs('WWW-Authenticate') : {}),
            ...(status === '429' || status === '503' ? refs('Retry-After') : {}),
            ...(idempotent && status.startsWith('2') ? refs('Idempotent-Replayed') : {}),
            ...response.headers,
          },
        };
      }
      describeSuccessResponses(operation.responses);
    }
  }
  return document;
}
