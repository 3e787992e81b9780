import {
  ConcurrentUpdateError,
  ConstraintViolationError,
  PersistenceError,
  StoreUnavailableError,
} from '@petstore/application';
import { DomainError, InvalidValueError } from '@petstore/domain';
import { ApiError, ErrorDetail } from './api-error';

/** The one Error shape (specification: code, message, status) plus optional details. */
export interface ErrorBody {
  code: string;
  message: string;
  status: number;
  details?: ErrorDetail[];
}

export interface ErrorResponse {
  body: ErrorBody;
  headers: Record<string, string>;
  /** Unexpected: log it with the request id. */
  unexpected: boolean;
}

const DOMAIN_STATUS: Record<DomainError['kind'], number> = {
  invalid: 400,
  not_found: 404,
  unknown_reference: 422,
  conflict: 409,
  gone: 410,
};

const GENERIC_CODE: Record<number, string> = {
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
  { status: number; code: string; message: string; details?: ErrorDetail[] }
> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'payload_too_large', message: 'The request body is larger than 64 KiB.' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: 'invalid_json', message: 'The request body does not match its Content-Length.' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: 'invalid_json', message: 'The request body is empty but Content-Type says JSON.' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 400, code: 'missing_content_type', message: 'Send the body as JSON with "Content-Type: application/json".' },
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

const UNAVAILABLE = 'The service is temporarily unavailable; try again shortly.';

/** The persistence errors the infrastructure translates driver errors into (no driver detail here). */
function persistenceResponse(error: PersistenceError): ErrorResponse {
  if (error instanceof StoreUnavailableError) return respond(503, 'service_unavailable', UNAVAILABLE, undefined, { 'Retry-After': '5' });
  // A collision with a concurrent transaction: the same request may simply be sent again.
  if (error instanceof ConcurrentUpdateError) return respond(503, 'service_unavailable', UNAVAILABLE, undefined, { 'Retry-After': '1' });
  if (error instanceof ConstraintViolationError) {
    return respond(409, 'conflict', 'The request conflicts with the current state of the resource (a concurrent change).');
  }
  return respond(400, 'validation_failed', 'A value of the request cannot be stored as given.');
}

/** Maps any error, from any layer, to the Error shape. The only place that decides statuses. */
export function toErrorResponse(error: unknown): ErrorResponse {
  if (error instanceof ApiError) {
    return respond(error.status, error.code, error.message, error.details, error.headers);
  }
  if (error instanceof InvalidValueError) {
    return respond(400, 'validation_failed', error.message, [{ field: error.field, message: error.message }]);
  }
  if (error instanceof DomainError) {
    return respond(DOMAIN_STATUS[error.kind], error.code, error.message);
  }
  if (error instanceof PersistenceError) return persistenceResponse(error);
  const e = error as { code?: string; statusCode?: number; status?: number; message?: string; getStatus?: () => number };
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
  return { ...respond(500, 'internal_error', 'Something went wrong on our side; it has been logged.'), unexpected: true };
}

function respond(
  status: number,
  code: string,
  message: string,
  details?: ErrorDetail[],
  headers: Record<string, string> = {},
): ErrorResponse {
  return { body: details?.length ? { code, message, status, details } : { code, message, status }, headers, unexpected: false };
}
