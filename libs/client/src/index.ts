export type { components, operations, paths } from './generated/schema.js';
export type { ErrorCode, KnownErrorCode, OperationErrorCode } from './error-codes.js';
export {
  conditionalOf,
  createPetstoreClient,
  nextPage,
  PetstoreApiError,
  retryAfterMs,
  unwrap,
  type ApiErrorBody,
  type Conditional,
  type ListItem,
  type ListPath,
  type ListQuery,
  type PetstoreClient,
  type PetstoreClientOptions,
  type Schemas,
  type SucceedingMethod,
  type Success,
  type SuccessData,
} from './petstore-client.js';
export {
  verifyWebhook,
  WebhookVerificationError,
  type WebhookEvent,
  type WebhookEventOf,
  type WebhookEventType,
  type WebhookHeaders,
} from './webhooks.js';
