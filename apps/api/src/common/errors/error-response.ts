import { ApplicationError, ErrorKind } from '@petstore/application';
import { BODY_LIMIT_BYTES } from '../http-kit/body-limit';
import { DomainError, InvalidValueError } from '@petstore/domain';
import { ApiError, ErrorDetail } from './api-error';
import type { PublicErrorCode } from './error-codes';
import { documentationUrlOf } from './error-docs';

/** The one Error shape (specification: code, message, status) plus optional details and its documentation. */
export interface ErrorBody {
  code: string;
  message: string;
  status: number;
  details?: ErrorDetail[];
  /** The code's entry in the served list of error codes (documentationUrlOf). */
  documentationUrl?: string;
}

export interface ErrorResponse {
  body: ErrorBody;
  headers: Record<string, string>;
  /** Unexpected: log it with the request id. */
  unexpected: boolean;
}

const UNAVAILABLE = 'The service is temporarily unavailable; try again shortly.';

/**
 * The one table from what an error means (its kind, raised by the domain or the application) to
 * how the API answers it. `message` replaces the error's own words where those are for the logs only
 * (persistence errors carry the driver's); otherwise the client reads the error's message.
 */
interface ErrorAnswer {
  status: number;
  code: PublicErrorCode;
  message?: string;
  headers?: Record<string, string>;
}

const RETRY_SOON = { status: 503, code: 'service_unavailable', message: UNAVAILABLE } as const;

const ERRORS: Record<ErrorKind, ErrorAnswer> = {
  invalid: { status: 400, code: 'validation_failed' },
  not_found: { status: 404, code: 'not_found' },
  // The body names something that does not exist: 422, unlike a missing path id (404).
  unknown_category: { status: 422, code: 'unknown_category' },
  unknown_pet: { status: 422, code: 'unknown_pet' },
  category_name_taken: { status: 409, code: 'category_name_taken' },
  category_in_use: { status: 409, code: 'category_in_use' },
  pet_not_available: { status: 409, code: 'pet_not_available' },
  invalid_status_transition: { status: 409, code: 'invalid_status_transition' },
  pet_has_open_orders: { status: 409, code: 'pet_has_open_orders' },
  insufficient_stock: { status: 409, code: 'insufficient_stock' },
  stock_limit_exceeded: { status: 409, code: 'stock_limit_exceeded' },
  order_already_complete: { status: 409, code: 'order_already_complete' },
  order_already_cancelled: { status: 409, code: 'order_already_cancelled' },
  hold_limit_reached: { status: 409, code: 'hold_limit_reached' },
  too_many_keys: { status: 409, code: 'too_many_keys' },
  insufficient_scope: { status: 403, code: 'insufficient_scope' },
  too_many_endpoints: { status: 409, code: 'too_many_endpoints' },
  webhook_url_taken: { status: 409, code: 'webhook_url_taken' },
  invalid_webhook_url: { status: 400, code: 'invalid_webhook_url' },
  idempotency_key_in_use: { status: 409, code: 'idempotency_key_in_use' },
  delivery_pending: { status: 409, code: 'delivery_pending' },
  webhook_delivery_off: { status: 409, code: 'webhook_delivery_off' },
  idempotency_key_reused: { status: 422, code: 'idempotency_key_reused' },
  idempotency_replay_withheld: { status: 409, code: 'idempotency_replay_withheld' },
  store_unavailable: { ...RETRY_SOON, headers: { 'Retry-After': '5' } },
  // The connection broke while the COMMIT was on its way: done or not, nobody knows (retry with the same key).
  outcome_unknown: {
    status: 503,
    code: 'outcome_unknown',
    message:
      'The database connection was lost while the request was committing: it may have been done. Retry with the ' +
      'same Idempotency-Key, or read the resource first.',
    headers: { 'Retry-After': '5' },
  },
  // A collision with a concurrent transaction: the same request may simply be sent again.
  concurrent_update: { ...RETRY_SOON, headers: { 'Retry-After': '1' } },
  constraint_violation: {
    status: 409,
    code: 'conflict',
    message: 'The request conflicts with the current state of the resource (a concurrent change).',
  },
  // If-Match named a state the resource is no longer in: read it again (its new ETag), then decide.
  precondition_failed: { status: 412, code: 'precondition_failed' },
  invalid_stored_value: {
    status: 400,
    code: 'validation_failed',
    message: 'A value of the request cannot be stored as given.',
  },
};

const GENERIC_CODE: Record<number, PublicErrorCode> = {
  400: 'validation_failed',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'missing_content_type',
  429: 'rate_limited',
};

/** Fastify's own errors, raised before a request reaches NestJS (body parsing, limits). */
const FASTIFY_ERRORS: Record<
  string,
  { status: number; code: PublicErrorCode; message: string; details?: ErrorDetail[] }
> = {
  FST_ERR_CTP_BODY_TOO_LARGE: {
    status: 413,
    code: 'payload_too_large',
    message: `The request body is larger than ${BODY_LIMIT_BYTES / 1024} KiB.`,
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    status: 400,
    code: 'invalid_json',
    message: 'The request body does not match its Content-Length.',
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    status: 400,
    code: 'invalid_json',
    message: 'The request body is empty but Content-Type says JSON.',
  },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 400,
    code: 'missing_content_type',
    message: 'Send the body as JSON with "Content-Type: application/json".',
  },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'invalid_json', message: 'The request body is not valid JSON.' },
  // The router's own errors (frameworkErrors): the URL is not valid percent-encoding, a path parameter is too long.
  FST_ERR_BAD_URL: { status: 400, code: 'bad_request', message: 'The request URL is not valid percent-encoding.' },
  FST_ERR_MAX_PARAM_LENGTH: {
    status: 400,
    code: 'validation_failed',
    message: 'A path parameter is longer than 100 characters.',
    details: [{ field: 'path', message: 'a path parameter is longer than 100 characters' }],
  },
};

/** Maps any error, from any layer, to the Error shape. The only place that decides statuses. */
export function toErrorResponse(error: unknown): ErrorResponse {
  if (error instanceof ApiError) {
    return respond(error.status, error.code, error.message, error.details, error.headers);
  }
  if (error instanceof DomainError || error instanceof ApplicationError) {
    const { status, code, message, headers } = ERRORS[error.kind];
    // An invalid value names its field for the client.
    const details = error instanceof InvalidValueError ? [{ field: error.field, message: error.message }] : undefined;
    return respond(status, code, message ?? error.message, details, headers);
  }
  const e = error as {
    code?: string;
    statusCode?: number;
    status?: number;
    message?: string;
    getStatus?: () => number;
  };
  if (typeof e?.code === 'string' && FASTIFY_ERRORS[e.code]) {
    const known = FASTIFY_ERRORS[e.code];
    return respond(known.status, known.code, known.message, known.details);
  }
  // JSON.parse failures surface as SyntaxError with a 400 status from Fastify's parser.
  if (error instanceof SyntaxError && (e.statusCode === 400 || e.status === 400)) {
    return respond(400, 'invalid_json', 'The request body is not valid JSON.');
  }
  // NestJS HttpExceptions (routing 404s and the like) and Fastify's other 4xx errors.
  const status = typeof e?.getStatus === 'function' ? e.getStatus() : e?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 404 || status === 405) return respond(404, 'not_found', 'No such route.');
    return respond(status, GENERIC_CODE[status] ?? 'bad_request', 'The request cannot be processed.');
  }
  return {
    ...respond(500, 'internal_error', 'Something went wrong on our side; it has been logged.'),
    unexpected: true,
  };
}

function respond(
  status: number,
  code: PublicErrorCode,
  message: string,
  details?: ErrorDetail[],
  headers: Record<string, string> = {},
): ErrorResponse {
  return {
    body: details?.length
      ? { code, message, status, details, documentationUrl: documentationUrlOf(code) }
      : { code, message, status, documentationUrl: documentationUrlOf(code) },
    headers,
    unexpected: false,
  };
}
