/**
 * The id a new aggregate is created with: the repository's `nextId()` hands it out (a database
 * sequence) before the aggregate is built, so an aggregate always has its id, stored or not.
 * Never client input: a value that is not a positive safe integer is a bug, not a bad request.
 */
export function newId(id: number): number {
  if (!Number.isSafeInteger(id) || id < 1) throw new RangeError(`A new aggregate's id must be positive, not ${id}.`);
  return id;
}
