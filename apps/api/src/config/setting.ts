/**
 * The vocabulary of the configuration schema (schema.ts): a setting is one environment variable with its
 * kind (type and range, checked by zod), its default as one would write it in the environment, and one line
 * of documentation. The loader (app-config.ts) and the generated docs table (config-table.ts) read the same
 * declarations, so a default, a range or a description is written once.
 */
import { z } from 'zod';

/** What a variable may hold: the zod schema reading its (trimmed, non-empty) text; how docs and errors say it. */
export interface Kind<T> {
  /** For the docs table: `integer, 0–65535`, `URL (redis://, rediss://)`. */
  readonly type: string;
  /** For the one-line error, after the variable's name: `must be a whole number from 0 to 65535`. */
  readonly problem: string;
  readonly schema: z.ZodType<T, string>;
  /** False for values that may hold a secret (keys, URLs with passwords): the error line does not repeat them. */
  readonly echo?: boolean;
}

export interface Setting<T> {
  readonly variable: string;
  readonly kind: Kind<unknown>;
  /** The default as written in the environment (parsed by the same kind); null = unset unless given. */
  readonly fallback: string | null;
  /** One line for the docs table (Markdown). */
  readonly doc: string;
  /** The value of an optional setting left unset. */
  readonly unset?: unknown;
  /** A secret: may instead be read from the file `<variable>_FILE` names (Docker and Kubernetes secrets). */
  readonly file?: boolean;
  /** Phantom: the value the loader hands out. */
  readonly __value?: T;
}

/** A setting with a default: always a value. */
export function setting<T>(variable: string, kind: Kind<T>, fallback: string, doc: string): Setting<T> {
  return { variable, kind, fallback, doc };
}

/** A setting without a default: `unset` (null unless given) when unset; its doc says what that means. */
export function optional<T>(variable: string, kind: Kind<T>, doc: string): Setting<T | null>;
export function optional<T, U>(variable: string, kind: Kind<T>, doc: string, unset: U): Setting<T | U>;
export function optional<T, U>(variable: string, kind: Kind<T>, doc: string, unset?: U): Setting<T | U | null> {
  return { variable, kind, fallback: null, doc, unset: unset ?? null };
}

/** The same setting, which may be given as the content of the file `<variable>_FILE` names instead. */
export function fromFile<T>(setting: Setting<T>): Setting<T> {
  return { ...setting, file: true };
}

export type ValueOf<S> = S extends Setting<infer T> ? T : never;

const WHOLE = /^\d+$/;

export function integer(min: number, max: number): Kind<number> {
  return {
    type: `integer, ${min}–${max}`,
    problem: `must be a whole number from ${min} to ${max}`,
    schema: z.string().regex(WHOLE).transform(Number).pipe(z.number().min(min).max(max)),
  };
}

/** Milliseconds of a time bound. */
export function milliseconds(min: number, max: number): Kind<number> {
  return { ...integer(min, max), type: `milliseconds, ${min}–${max}` };
}

/** Up to `maxItems` comma-separated whole numbers. */
export function integerList(maxItems: number, min: number, max: number): Kind<number[]> {
  const item = z.string().trim().regex(WHOLE).transform(Number).pipe(z.number().min(min).max(max));
  return {
    type: `up to ${maxItems} integers ${min}–${max}, comma-separated`,
    problem: `must be up to ${maxItems} comma-separated whole numbers from ${min} to ${max}`,
    schema: z
      .string()
      .transform((value) => value.split(','))
      .pipe(z.array(item).max(maxItems)),
  };
}

export function text(): Kind<string> {
  return { type: 'text', problem: 'must be text', schema: z.string() };
}

/** The least a secret's characters, counted, must add up to (`estimatedBits`); see `secret`. */
export const SECRET_MIN_BITS = 80;

/**
 * An estimate of a value's entropy in bits from its own characters: the length times the Shannon entropy of their
 * frequencies. It cannot tell a random value from a chosen one (`abcdefghijklmnopqrstuvwxyz012345` passes), only
 * catch the obvious: `a` × 32 is 0 bits, two characters alternating 32. 32 hex digits of a random source
 * (`openssl rand -hex 16`, 128 bits) give at least 89 in 200,000 draws, so a real key is never refused.
 */
export function estimatedBits(value: string): number {
  const counts = new Map<string, number>();
  for (const char of value) counts.set(char, (counts.get(char) ?? 0) + 1);
  const length = [...value].length;
  let bits = 0;
  for (const count of counts.values()) bits -= count * Math.log2(count / length);
  return bits;
}

/** Whether the value is a shorter part repeated (`abcd` × 8, `password1234password1234password`). */
export function isRepetition(value: string): boolean {
  for (let period = 1; period <= value.length / 2; period++) {
    if (value.slice(period) === value.slice(0, value.length - period)) return true;
  }
  return false;
}

/**
 * The words of the placeholders that example files and templates put where a secret goes
 * (`change-me-change-me-change-me-32`, `REPLACE_WITH_A_RANDOM_32_CHAR_KEY`, `your-secret-here`): a value holding one
 * of them as a word of its own was copied, not generated. Only whole words count (runs of letters between other
 * characters, or a run of `x`), so a random value is refused only if it happens to hold, say, `-example-` (hex has
 * no such letters; 32 base64url characters hold one about once in millions of draws).
 */
const PLACEHOLDER_WORDS = new Set([
  'change',
  'changeme',
  'changethis',
  'replace',
  'replaceme',
  'example',
  'placeholder',
  'sample',
  'dummy',
  'todo',
  'fixme',
  'your',
  'yourkey',
  'insert',
  'here',
  'random',
  'secret',
  'password',
  'redacted',
]);

/** A run of this many identical characters (`xxxxxxxx`, `00000000`) is filled in, not random: hex has one in 10^7. */
const FILLED_RUN = 8;

/**
 * Why a value is a placeholder rather than a generated secret, or null: it holds a placeholder's word (see
 * PLACEHOLDER_WORDS) or `xxx`, or one character repeated FILLED_RUN times in a row.
 */
export function placeholderReason(value: string): string | null {
  for (const word of value.toLowerCase().match(/[a-z]+/g) ?? []) {
    if (PLACEHOLDER_WORDS.has(word)) return `it holds the word "${word}"`;
    if (/^x{3,}$/.test(word)) return `it holds "${word}"`;
  }
  if (new RegExp(`(.)\\1{${FILLED_RUN - 1}}`).test(value))
    return `it repeats one character ${FILLED_RUN} times in a row`;
  return null;
}

/**
 * A secret: at least `minLength` characters, no white space, and not obviously guessable: not a shorter part
 * repeated, at least SECRET_MIN_BITS by `estimatedBits` (issue 36, 5a: 32 identical characters were accepted), and
 * not a template's placeholder (issue 50: `change-me-change-me-change-me-32` was accepted), which gets its own
 * message.
 */
export function secret(minLength: number): Kind<string> {
  return {
    type:
      `text, ${minLength}+ characters, no spaces, random (not a repetition, ${SECRET_MIN_BITS}+ bits, ` +
      'not a placeholder)',
    problem:
      `must be at least ${minLength} characters without spaces, and random: not a shorter part repeated, ` +
      `with at least ${SECRET_MIN_BITS} bits by the count of its characters (\`openssl rand -hex 24\` makes one)`,
    schema: z
      .string()
      .min(minLength)
      .regex(/^\S+$/)
      .refine((value) => !isRepetition(value) && estimatedBits(value) >= SECRET_MIN_BITS)
      // Its own message (the loader shows it instead of `problem`), saying which placeholder it looks like.
      .refine((value) => placeholderReason(value) === null, {
        error: (issue) =>
          `looks like a placeholder, not a generated secret (${placeholderReason(String(issue.input))}): ` +
          'set a random value, such as `openssl rand -hex 24` prints',
        params: { explained: true },
      }),
    echo: false,
  };
}

/** Up to `maxItems` secrets, comma-separated, each as `secret` takes it (a pepper and the previous ones). */
export function secretList(minLength: number, maxItems: number): Kind<string[]> {
  const one = secret(minLength);
  return {
    type: `up to ${maxItems} secrets as \`ADMIN_API_KEY\`'s, comma-separated, newest first`,
    problem: `must be up to ${maxItems} comma-separated values, each ${one.problem.replace(/^must be /, '')}`,
    schema: z
      .string()
      .transform((value) => value.split(',').map((item) => item.trim()))
      .pipe(z.array(one.schema).min(1).max(maxItems)),
    echo: false,
  };
}

/** A URL of one of these schemes (`redis`, `rediss`). */
export function url(...schemes: string[]): Kind<string> {
  const names = schemes.map((scheme) => `${scheme}://`).join(' or ');
  return {
    type: `URL (${schemes.map((scheme) => `${scheme}://`).join(', ')})`,
    problem: `must be a ${names} URL`,
    schema: z.url({ protocol: new RegExp(`^(${schemes.join('|')})$`) }),
    echo: false, // a URL may hold a password
  };
}

/** Up to `maxItems` URLs of these schemes, comma-separated (`DATABASE_REPLICA_URLS`). */
export function urlList(maxItems: number, ...schemes: string[]): Kind<string[]> {
  const one = url(...schemes);
  return {
    type: `up to ${maxItems} URLs (${schemes.map((scheme) => `${scheme}://`).join(', ')}), comma-separated`,
    problem: `must be up to ${maxItems} comma-separated ${schemes.map((scheme) => `${scheme}://`).join(' or ')} URLs`,
    schema: z
      .string()
      .transform((value) => value.split(',').map((item) => item.trim()))
      .pipe(z.array(one.schema).min(1).max(maxItems)),
    echo: false, // URLs may hold passwords
  };
}

export function oneOf<const T extends readonly [string, ...string[]]>(values: T): Kind<T[number]> {
  return {
    type: values.map((value) => `\`${value}\``).join(', '),
    problem: `must be one of ${values.join(', ')}`,
    schema: z.enum(values) as unknown as z.ZodType<T[number], string>,
  };
}

export const BOOLEAN_TRUE = ['1', 'true', 'on', 'yes'];
export const BOOLEAN_FALSE = ['0', 'false', 'off', 'no'];

/** true/false (also 1/0, on/off, yes/no; any case): zod's stringbool. */
export function boolean(): Kind<boolean> {
  return {
    type: 'boolean',
    problem: 'must be true or false',
    schema: z.stringbool({ truthy: BOOLEAN_TRUE, falsy: BOOLEAN_FALSE }),
  };
}

/** An ISO 8601 date-time (`example` shows how one looks in the error line). */
export function dateTime(example: string): Kind<Date> {
  return {
    type: 'ISO 8601 date-time',
    problem: `must be an ISO 8601 date-time such as ${example}`,
    schema: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}/)
      .transform((value) => new Date(value))
      .pipe(z.date()),
  };
}
