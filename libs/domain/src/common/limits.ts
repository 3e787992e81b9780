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
  /** Active (not revoked) API keys one account may hold. */
  activeApiKeys: { max: 20 },
  /** An API key's name (optional; the same rules as other names). */
  apiKeyName: { min: 1, max: 100 },
  /** How far ahead an API key's expiresAt may be: one year (366 days, a leap year's). */
  apiKeyLifetimeMs: { max: 366 * 24 * 60 * 60 * 1000 },
  /** Webhook endpoints one account may have. */
  webhookEndpoints: { max: 10 },
  webhookUrl: { max: 2048 },
  /** How far in the past an order's shipDate may be (clock skew, time zones): one day. */
  shipDatePastMs: { max: 24 * 60 * 60 * 1000 },
  /** Largest page a list returns. */
  pageSize: { min: 1, max: 100, default: 20 },
  /** Most ids one `GET /pets?ids=` may name. */
  petIdsFilter: { max: 100 },
  /**
   * `GET /pets?name=`: at least this many letters or digits in a row, the least the trigram index on the names can
   * look up (a shorter run makes no trigram, and the search reads every pet); the same maximum as a name.
   */
  petNameFilter: { minRun: 3, max: 100 },
} as const;
