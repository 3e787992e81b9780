import { ValidateIf } from 'class-validator';

/**
 * The field may be left out, but `null` is a value like any other and goes through the
 * validators (which refuse it unless they allow null). `@IsOptional()` would let `null` through
 * as if it were absent.
 */
export function IsOmittable(): PropertyDecorator {
  return ValidateIf((_, value) => value !== undefined);
}
