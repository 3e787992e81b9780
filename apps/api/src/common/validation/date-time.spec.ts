import { isDateTime } from './date-time';

describe('isDateTime', () => {
  it.each([
    '2026-11-21T10:00:00Z',
    '2026-11-21T10:00:00.123Z',
    '2026-11-21T10:00:00.123456789+02:00',
    '2026-11-21t10:00:00z',
    '2024-02-29T00:00:00-05:30',
    '0000-02-29T00:00:00Z',
  ])('accepts %s', (value) => {
    expect(isDateTime(value)).toBe(true);
  });

  it.each([
    ['a date without time', '2026-11-21'],
    ['no time zone', '2026-11-21T10:00:00'],
    ['a space for T', '2026-11-21 10:00:00Z'],
    ['February 30th', '2026-02-30T00:00:00Z'],
    ['February 29th of a common year', '2026-02-29T00:00:00Z'],
    ['month 13', '2026-13-01T00:00:00Z'],
    ['day 0', '2026-01-00T00:00:00Z'],
    ['hour 24', '2026-01-01T24:00:00Z'],
    ['second 60', '2026-01-01T23:59:60Z'],
    ['an offset of 24 hours', '2026-01-01T00:00:00+24:00'],
    ['a time stamp', '1763769600000'],
    ['words', 'tomorrow'],
    ['an empty string', ''],
    ['a number', 1763769600000],
    ['null', null],
  ])('refuses %s', (_, value) => {
    expect(isDateTime(value)).toBe(false);
  });
});
