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
