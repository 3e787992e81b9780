/**
 * Domain limits (docs/domain.md). The request DTOs import these same constants,
 * so what the API validates and what the aggregates enforce cannot drift apart.
 */
export const LIMITS = {
  categoryName: { min: 1, max: 100 },
  categoryDescription: { max: 1000 },
  petName: { min: 1, max: 100 },
  accountName: { min: 1, max: 100 },
  stockQuantity: { min: 0, max: 2_147_483_647 },
  orderQuantity: { min: 1, max: 1000 },
  messageText: { min: 1, max: 2000 },
  idempotencyKey: { min: 1, max: 255 },
  /** Largest page a list returns. */
  pageSize: { min: 1, max: 100, default: 20 },
  /** Most ids one `GET /pets?ids=` may name. */
  petIdsFilter: { max: 100 },
} as const;
