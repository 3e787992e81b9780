export type { components, operations, paths } from './generated/schema';
export {
  createPetstoreClient,
  nextPage,
  PetstoreApiError,
  retryAfterMs,
  unwrap,
  type ApiErrorBody,
  type ListItem,
  type ListPath,
  type ListQuery,
  type PetstoreClient,
  type PetstoreClientOptions,
  type Schemas,
  type SuccessData,
} from './petstore-client';
