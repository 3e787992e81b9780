import { entityTag, entityTagOf, matchesStrongly, matchesWeakly, parseEntityTags } from './entity-tag';

describe('entity tags', () => {
  it('tags a JSON text strongly: the same text the same tag, any change another, 22 base64url characters', () => {
    const tag = entityTag('{"id":1,"name":"Rex"}');
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(entityTag('{"id":1,"name":"Rex"}')).toBe(tag);
    expect(entityTag('{"id":1,"name":"Rex "}')).not.toBe(tag);
    expect(entityTagOf({ id: 1, name: 'Rex' })).toBe(tag);
  });

  it.each([
    ['*', '*'],
    ['"a"', ['"a"']],
    ['"a", W/"b" ,"c"', ['"a"', 'W/"b"', '"c"']],
    ['"a",,  , "b"', ['"a"', '"b"']],
    ['""', ['""']],
    ['"with,comma"', ['"with,comma"']],
    [
      ['"a"', '"b"'],
      ['"a"', '"b"'],
    ],
  ])('parses %j', (value, expected) => {
    expect(parseEntityTags(value)).toEqual(expected);
  });

  it.each([undefined, '', '   ', 'a', '"a" "b"', '"a', 'a"', '"a"x', 'W/a', '"a\u0001"', '**', '*, "a"', ','])(
    'refuses %j',
    (value) => {
      expect(parseEntityTags(value)).toBeNull();
    },
  );

  it('compares strongly for If-Match (a weak tag never matches) and weakly for If-None-Match', () => {
    expect(matchesStrongly(['"x"', '"a"'], '"a"')).toBe(true);
    expect(matchesStrongly(['W/"a"'], '"a"')).toBe(false);
    expect(matchesStrongly('*', '"a"')).toBe(true);
    expect(matchesStrongly(['"b"'], '"a"')).toBe(false);
    expect(matchesWeakly(['W/"a"'], '"a"')).toBe(true);
    expect(matchesWeakly(['"a"'], '"a"')).toBe(true);
    expect(matchesWeakly('*', '"a"')).toBe(true);
    expect(matchesWeakly(['"b"'], '"a"')).toBe(false);
  });
});
