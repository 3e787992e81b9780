import { InvalidValueError } from './domain-error';

/** Trims `value` and checks its length; the trimmed text is what the domain keeps. */
export function boundedText(field: string, value: string, min: number, max: number): string {
  const text = value.trim();
  if (text.length < min || text.length > max) {
    throw new InvalidValueError(
      field,
      min > 0
        ? `${field} must be ${min} to ${max} characters long (after trimming).`
        : `${field} must be at most ${max} characters long.`,
    );
  }
  return text;
}

/** Checks that `value` is an integer within [min, max]. */
export function boundedInteger(field: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new InvalidValueError(field, `${field} must be an integer from ${min} to ${max}.`);
  }
  return value;
}
