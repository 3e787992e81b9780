/**
 * Every `code` the service can answer, with the statuses that carry it: the list clients get (`ErrorCode` in the
 * OpenAPI description, the typed client's `ErrorCode` union). docs/api.md's errors table has one row per pair, and
 * a test holds this list, that table and the codes written in the sources equal. A plain object literal (no
 * `as const`), so that the resource generator (tools/plugin) can add a new resource's code to it.
 */
export const ERROR_CODES = {
  invalid_json: [400],
  missing_content_type: [400],
  validation_failed: [400],
  invalid_webhook_url: [400],
  bad_request: [400],
  unauthorized: [401],
  api_key_expired: [401],
  forbidden: [403],
  insufficient_scope: [403],
  not_found: [404],
  method_not_allowed: [405],
  request_timeout: [408],
  category_name_taken: [409],
  category_in_use: [409],
  pet_not_available: [409],
  insufficient_stock: [409],
  invalid_status_transition: [409],
  order_already_complete: [409],
  order_already_cancelled: [409],
  pet_has_open_orders: [409],
  stock_limit_exceeded: [409],
  hold_limit_reached: [409],
  too_many_keys: [409],
  too_many_endpoints: [409],
  webhook_url_taken: [409],
  idempotency_key_in_use: [409],
  delivery_pending: [409],
  webhook_delivery_off: [409],
  idempotency_replay_withheld: [409],
  conflict: [409],
  operation_sunset: [410],
  precondition_failed: [412],
  payload_too_large: [413],
  unsupported_content_encoding: [415],
  unknown_category: [422],
  unknown_pet: [422],
  idempotency_key_reused: [422],
  rate_limited: [429],
  too_many_auth_failures: [429],
  headers_too_large: [431],
  internal_error: [500],
  service_unavailable: [503],
  outcome_unknown: [503],
  overloaded: [503],
};

export type PublicErrorCode = keyof typeof ERROR_CODES;
