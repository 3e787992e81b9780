import { applyDecorators } from '@nestjs/common';
import { IsInt, Max, Min, ValidateBy, ValidationOptions } from 'class-validator';

export const INT64_MAX = 2n ** 63n - 1n;

/** A positive int64 in decimal, without sign or leading zeros: how ids appear in paths and queries. */
export function isPositiveInt64(text: string): boolean {
  return /^[1-9]\d{0,18}$/.test(text) && BigInt(text) <= INT64_MAX;
}

/**
 * A query parameter holding an id (a string). It stays a string so that it is exact: a valid
 * int64 beyond 2^53, which the service never issues, matches nothing instead of another id.
 */
export function IsPositiveInt64String(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isPositiveInt64String',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && isPositiveInt64(value),
        defaultMessage: (args) =>
          `${options?.each ? 'each value in ' : ''}${args?.property ?? 'value'} must be a positive 64-bit integer`,
      },
    },
    options,
  );
}

/**
 * An id in a JSON body: an integer from 1 to 2^53 − 1. Beyond that a JSON number is not exact
 * (I-JSON, RFC 7493), and the service issues no such id.
 */
export function IsIdNumber(): PropertyDecorator {
  return applyDecorators(IsInt(), Min(1), Max(Number.MAX_SAFE_INTEGER));
}
