import { EVENT_TYPES, EventType } from '@petstore/domain';

/** The part of an event type before its dot: what it is about (`pet` of a pet's). */
const family = (type: EventType) => type.slice(0, type.indexOf('.'));

/**
 * Event types as the description's prose names them, made from the catalogue so that a sentence stays true when a
 * type is added: each in backticks, comma-separated, and a family whose every type is in the list (two or more) as
 * one `<family>.*`, where its first type stands.
 */
export function eventTypeProse(types: readonly EventType[]): string {
  const named: string[] = [];
  for (const type of types) {
    const all = EVENT_TYPES.filter((other) => family(other) === family(type));
    const whole = all.length > 1 && all.every((other) => types.includes(other));
    const name = whole ? `${family(type)}.*` : type;
    if (!named.includes(name)) named.push(name);
  }
  return named.map((name) => `\`${name}\``).join(', ');
}
