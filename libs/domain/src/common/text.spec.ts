import { Account } from '../account/account';
import { Category } from '../category/category';
import { Pet } from '../pet/pet';
import { InvalidValueError } from './domain-error';
import { displayName, nameKey, scriptsOf } from './text';

const now = new Date('2026-01-01T00:00:00Z');
const makers: Array<[string, (name: string) => unknown]> = [
  ['account', (name) => Account.signUp({ id: 1, name, now })],
  ['category', (name) => Category.create({ id: 1, name })],
  ['pet', (name) => Pet.create({ id: 1, name, categoryId: 1, now })],
];

describe('names people read', () => {
  it.each(makers)('%s names refuse control and format characters, naming the field and the character', (_, make) => {
    for (const [name, code] of [
      ['Evil\u202Egnp.exe', '202E'],
      ['Bell\u0007', '0007'],
      ['Zero\u200Bwidth', '200B'],
      ['Joiner\u200D', '200D'],
      ['Isolate\u2066x', '2066'],
      ['B\uFEFFom', 'FEFF'],
      ['soft\u00ADhyphen', '00AD'],
      ['line\u2028break', '2028'],
      ['esc\u001B[31m', '001B'],
    ]) {
      const attempt = () => make(name);
      expect(attempt).toThrow(InvalidValueError);
      expect(attempt).toThrow(`name must not contain control or invisible characters (U+${code}).`);
      expect(attempt).toThrow(expect.objectContaining({ field: 'name' }));
    }
  });

  // Issue 36, item 4: each of these looked exactly like `Dogs` and was accepted.
  it.each(makers)(
    '%s names refuse characters that show as nothing though filed as letters, marks or symbols',
    (_, make) => {
      for (const [name, code] of [
        ['Dogs\u3164', '3164'], // Hangul filler (a letter, of Hangul, which Latin may mix with)
        ['Dogs\u115F', '115F'], // Hangul choseong filler
        ['Do\u1160gs', '1160'], // Hangul jungseong filler
        ['Dogs\uFFA0', 'FFA0'], // halfwidth Hangul filler
        ['Dogs\u034F', '034F'], // combining grapheme joiner (a mark)
        ['Dogs\uFE0F', 'FE0F'], // variation selector 16
        ['Dogs\uFE00', 'FE00'], // variation selector 1
        ['Dogs\u{E0100}', 'E0100'], // variation selector 17
        ['Dogs\u180B', '180B'], // Mongolian free variation selector 1
        ['Dogs\u17B4', '17B4'], // Khmer inherent vowel aq
        ['Dogs\u17B5', '17B5'], // Khmer inherent vowel aa
        ['Dogs\u2800', '2800'], // braille pattern blank (a symbol, not default-ignorable)
        ['Dogs\uE000', 'E000'], // private use
      ]) {
        const attempt = () => make(name);
        expect(attempt).toThrow(InvalidValueError);
        expect(attempt).toThrow(`name must not contain control or invisible characters (U+${code}).`);
        expect(attempt).toThrow(expect.objectContaining({ field: 'name' }));
      }
    },
  );

  it.each(makers)("%s names refuse letters of scripts outside UTS #39's recommended set", (_, make) => {
    for (const [name, code] of [
      ['\uA4D3ogs', 'A4D3'], // ꓓ Lisu letter da
      ['\u1455ogs', '1455'], // ᑕ Canadian syllabics
      ['\u2D54ogs', '2D54'], // ⵔ Tifinagh letter yar
      ['D\u07CBgs', '07CB'], // ߋ NKo letter ee
      ['\u13A0OGS', '13A0'], // Ꭰ Cherokee (Limited Use)
      ['\u2C9Eogs', '2C9E'], // Ⲟ Coptic (Excluded)
      ['Dog\u07C5', '07C5'], // ߅ NKo digit five
    ]) {
      const attempt = () => make(name);
      expect(attempt).toThrow(InvalidValueError);
      expect(attempt).toThrow(
        `name must not contain letters of a script not in everyday use (U+${code}; UTS #39 recommended scripts only).`,
      );
    }
  });

  it.each(makers)('%s names refuse letters of several scripts', (_, make) => {
    expect(() => make('D\u043Egs')).toThrow('name must not mix letters of several scripts (Latin, Cyrillic).');
    expect(() => make('\u0391pple')).toThrow('(Greek, Latin)');
  });

  it.each(makers)('%s names keep one script, Latin with East Asian scripts, digits, marks and emoji', (_, make) => {
    for (const name of [
      'Dogs',
      'Собаки',
      'Σκύλοι',
      'Jürgen Müller',
      '犬 Dogs',
      'ポチ Pochi',
      '강아지 Dogs',
      'Rex 2 🐶',
      'Zoë',
      'Zoe\u0308', // a combining mark (Inherited) is not invisible
      'ሰላም', // Ethiopic, Bengali, Tamil, Khmer, Tibetan: recommended scripts
      'কুকুর',
      'நாய்',
      'ឆ្កែ',
      'ཁྱི',
      'Rex ٣', // Arabic-Indic digit
    ]) {
      expect(() => make(name)).not.toThrow();
    }
  });

  it('counts only letters for scripts', () => {
    expect(scriptsOf('Rex-2 (the 3rd) 🐶')).toEqual(['Latin']);
    expect(scriptsOf('D\u043Egs')).toEqual(['Latin', 'Cyrillic']);
    expect(displayName('name', '  Rex  ', 1, 10)).toBe('Rex');
  });

  it('compares names after NFKC normalisation and case folding', () => {
    expect(nameKey('ＤＯＧＳ')).toBe(nameKey('Dogs'));
    expect(nameKey('DOGS')).toBe('dogs');
    expect(nameKey('Straße')).toBe(nameKey('STRASSE'));
    expect(nameKey('ΟΔΟΣ')).toBe(nameKey('οδοσ'));
    expect(nameKey('ﬁsh')).toBe('fish');
    expect(nameKey('Cafe\u0301')).toBe(nameKey('Café'));
    expect(nameKey('Dogs')).not.toBe(nameKey('Dog'));
  });
});
