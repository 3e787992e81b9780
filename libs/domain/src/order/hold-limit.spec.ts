import { DomainError } from '../common/domain-error';
import { assertWithinHoldLimit, HoldLimitReachedError } from './hold-limit';

describe('assertWithinHoldLimit (per-customer hold limit)', () => {
  it('allows up to the limit, the limit itself included', () => {
    expect(() => assertWithinHoldLimit(0, 100, 100)).not.toThrow();
    expect(() => assertWithinHoldLimit(93, 7, 100)).not.toThrow();
  });

  it('refuses what would go past it as a conflict with the code hold_limit_reached', () => {
    let error: unknown;
    try {
      assertWithinHoldLimit(98, 7, 100);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(HoldLimitReachedError);
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ kind: 'hold_limit_reached' });
    expect(error).toMatchObject({ openUnits: 98, requested: 7, limit: 100 });
    expect(() => assertWithinHoldLimit(0, 101, 100)).toThrow(HoldLimitReachedError);
  });

  it('a limit of 0 is no limit', () => {
    expect(() => assertWithinHoldLimit(1_000_000, 1000, 0)).not.toThrow();
  });
});
