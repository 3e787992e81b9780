import { createHash } from 'node:crypto';

/**
 * The entity tag of a representation: a strong tag (RFC 9110, 8.8.3), the first 128 bits of the SHA-256 of the
 * JSON text exactly as sent, in base64url. It changes exactly when the body does (a collision is out of reach),
 * needs no column or version kept anywhere, and costs about a microsecond for a resource of a few hundred bytes.
 * The one place a tag is made: the `ETag` of a response (conditional.hooks.ts) and the tag an `If-Match` is compared
 * with under the row lock (`@IfMatch`) both come from here, from the same JSON text.
 */
export function entityTag(json: string): string {
  return `"${createHash('sha256').update(json).digest('base64url').slice(0, 22)}"`;
}

/** The tag of a representation as the API sends it: its JSON text (the serialiser is Fastify's JSON.stringify). */
export function entityTagOf(representation: unknown): string {
  return entityTag(JSON.stringify(representation));
}

/** An `If-Match` or `If-None-Match` value: `*`, or the entity tags listed (`W/` kept: comparisons differ). */
export type EntityTagList = '*' | string[];

// One list element: an entity-tag (`[W/]"<etagc>*"`, etagc = %x21 / %x23-7E / obs-text) or an empty element (the
// list syntax allows `a, , b`), then a comma or the end.
const ELEMENT = /[ \t]*((?:W\/)?"[\x21\x23-\x7E\x80-\xFF]*")?[ \t]*(?:,|$)/y;

/**
 * Parses `If-Match` / `If-None-Match` (RFC 9110, 13.1.1-2): `*`, or a comma-separated list of entity tags.
 * Returns null for a value that is neither. Hand-written: a dozen lines for a grammar this small, where the one
 * maintained parser (jshttp's `fresh`) reads only `If-None-Match` for a cache and is not among the dependencies.
 */
export function parseEntityTags(value: string | string[] | undefined): EntityTagList | null {
  if (value === undefined) return null;
  const text = (Array.isArray(value) ? value.join(', ') : value).trim();
  if (text === '*') return '*';
  if (text === '') return null;
  const tags: string[] = [];
  ELEMENT.lastIndex = 0;
  while (ELEMENT.lastIndex < text.length) {
    const start = ELEMENT.lastIndex;
    const match = ELEMENT.exec(text);
    if (!match || ELEMENT.lastIndex === start) return null;
    if (match[1]) tags.push(match[1]);
  }
  return tags.length ? tags : null;
}

/** `If-Match`: strong comparison (13.1.1): a weak tag never matches; `*` matches any current representation. */
export function matchesStrongly(list: EntityTagList, tag: string): boolean {
  return list === '*' || list.some((listed) => listed === tag && !listed.startsWith('W/'));
}

/** `If-None-Match`: weak comparison (13.1.2): `W/"x"` and `"x"` are the same tag; `*` matches any. */
export function matchesWeakly(list: EntityTagList, tag: string): boolean {
  const opaque = (t: string) => (t.startsWith('W/') ? t.slice(2) : t);
  return list === '*' || list.some((listed) => opaque(listed) === opaque(tag));
}
