import { DomainError } from '../common/domain-error';

/** No order takes more units than are in stock (invariant I1: no overselling). */
export class InsufficientStockError extends DomainError {
  readonly kind = 'insufficient_stock' as const;
  constructor(
    readonly petId: number,
    readonly requested: number,
    readonly inStock: number,
  ) {
    super(`Pet ${petId} has ${inStock} unit${inStock === 1 ? '' : 's'} in stock; ${requested} requested.`);
  }
}

/**
 * Units given back (a cancelled order) would lift the stock above its limit. Only possible when
 * an administrator set the stock close to the limit while the order was open.
 */
export class StockLimitExceededError extends DomainError {
  readonly kind = 'stock_limit_exceeded' as const;
  constructor(
    readonly petId: number,
    readonly quantity: number,
    readonly limit: number,
  ) {
    super(`Pet ${petId}'s stock cannot exceed ${limit}; it would be ${quantity}. Lower the stock first.`);
  }
}
