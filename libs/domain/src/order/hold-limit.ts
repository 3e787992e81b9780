import { DomainError } from '../common/domain-error';

/** A customer may hold at most so many units in open orders (stock hoarding). */
export class HoldLimitReachedError extends DomainError {
  readonly kind = 'hold_limit_reached' as const;
  constructor(
    readonly openUnits: number,
    readonly requested: number,
    readonly limit: number,
  ) {
    super(
      `A customer may hold at most ${limit} units in open orders; ${openUnits} are held and ${requested} more ` +
        'requested. Complete or cancel an order first.',
    );
  }
}

/**
 * The per-customer hold limit: the units of a customer's open orders (placed, not completed; a
 * cancelled order no longer exists) plus the `requested` ones may not exceed `limit`. A limit of
 * 0 is no limit; administrators are not subject to it (the caller decides who is).
 */
export function assertWithinHoldLimit(openUnits: number, requested: number, limit: number): void {
  if (limit > 0 && openUnits + requested > limit) throw new HoldLimitReachedError(openUnits, requested, limit);
}
