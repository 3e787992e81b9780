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
 * overrides U+202A–U+202E and isolates, zero-width U+200B–U+200D, U+FEFF, the soft hyphen…), lone surrogates and
 * the line and paragraph separators. Each can make a name show as something it is not.
 */
const INVISIBLE_OR_CONTROL = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;

/**
 * The scripts whose letters a name is checked for mixing. Hand-written over the engine's own Unicode data (the
 * `\p{Script=…}` classes): no maintained npm library gives a character's script, and the confusable-skeleton
 * libraries carry their own tables. Letters of other scripts are not counted.
 */
const SCRIPTS = [
  'Latin',
  'Greek',
  'Cyrillic',
  'Armenian',
  'Georgian',
  'Cherokee',
  'Coptic',
  'Hebrew',
  'Arabic',
  'Devanagari',
  'Thai',
  'Han',
  'Hiragana',
  'Katakana',
  'Hangul',
  'Bopomofo',
] as const;
type Script = (typeof SCRIPTS)[number];
const SCRIPT_PATTERNS = SCRIPTS.map((script) => [script, new RegExp(`^\\p{Script=${script}}$`, 'u')] as const);

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
 * control, format or separator character; letters of one script (or Latin with Han, Kana, Hangul or Bopomofo), so
 * that `Dоgs` with a Cyrillic `о` is not taken for `Dogs`.
 */
export function displayName(field: string, value: string, min: number, max: number): string {
  const text = boundedText(field, value, min, max);
  const hidden = INVISIBLE_OR_CONTROL.exec(text);
  if (hidden) {
    const code = hidden[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
    throw new InvalidValueError(field, `${field} must not contain control or invisible characters (U+${code}).`);
  }
  const scripts = scriptsOf(text);
  if (scripts.length > 1 && !ALLOWED_MIXES.some((mix) => scripts.every((script) => mix.has(script)))) {
    throw new InvalidValueError(field, `${field} must not mix letters of several scripts (${scripts.join(', ')}).`);
  }
  return text;
}

/**
 * What two names are compared by for uniqueness: Unicode NFKC (`ＤＯＧＳ` is `DOGS`, `ﬁ` is `fi`) then case folding,
 * then NFKC again (folding may undo it). Full case folding is approximated by upper- then lower-casing, which folds
 * `ß` with `ss` and the final sigma with `σ` as folding does; JavaScript has no casefold of its own.
 */
export function nameKey(name: string): string {
  return name.normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC');
}
