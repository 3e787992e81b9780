import { Transform } from 'class-transformer';

/**
 * Query values arrive as strings. These transforms convert only well-formed input and
 * leave anything else as it came, so that the validators reject it with a clear message.
 */
export function QueryInteger(): PropertyDecorator {
  return Transform(({ value }) => (typeof value === 'string' && /^-?\d{1,16}$/.test(value) ? Number(value) : value));
}

export function QueryBoolean(): PropertyDecorator {
  return Transform(({ value }) => (value === 'true' ? true : value === 'false' ? false : value));
}

/** A repeatable parameter (`status=a&status=b`), also accepting one comma-separated value. */
export function QueryList(): PropertyDecorator {
  return Transform(({ value }) => {
    const values = Array.isArray(value) ? value : [value];
    return values
      .flatMap((v) => (typeof v === 'string' ? v.split(',') : [v]))
      .map((v) => (typeof v === 'string' ? v.trim() : v));
  });
}
