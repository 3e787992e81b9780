import { ValueTransformer } from 'typeorm';

/**
 * int64 columns come back from pg as strings. The service's ids are issued by
 * sequences far below 2^53, so they are exact as JSON numbers.
 */
export const bigintTransformer: ValueTransformer = {
  to: (value: number | null | undefined) => value,
  from: (value: string | null) => (value === null ? null : Number(value)),
};
