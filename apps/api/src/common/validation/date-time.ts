import { ValidationOptions, registerDecorator } from 'class-validator';

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|([+-])(\d{2}):(\d{2}))$/;

/**
 * An RFC 3339 date-time (the ISO 8601 profile of OpenAPI's `format: date-time`) with a time zone,
 * whose calendar fields exist: `2026-02-30T00:00:00Z` is refused rather than rolled over to March.
 */
export function isDateTime(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const m = DATE_TIME.exec(value);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const lastOfMonth = new Date(0);
  lastOfMonth.setUTCFullYear(year, month, 0); // (Date.UTC would read years 0–99 as 1900–1999)
  const daysInMonth = lastOfMonth.getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth) return false;
  if (hour > 23 || minute > 59 || second > 59) return false;
  if (m[9] && (Number(m[10]) > 23 || Number(m[11]) > 59)) return false;
  return !Number.isNaN(Date.parse(value));
}

export function IsDateTime(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isDateTime',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: `${String(propertyName)} must be an ISO 8601 date-time with a time zone, like 2026-11-21T10:00:00Z`,
        ...options,
      },
      validator: { validate: (value: unknown) => isDateTime(value) },
    });
}
