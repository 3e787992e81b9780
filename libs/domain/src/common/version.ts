/**
 * Resource versions (issue 49): each Category, Pet, Stock entry, Order and Message has a `version`, 1 when it is
 * created, one more for every stored change of what the API shows of it, so that a consumer of events that arrive in
 * any order keeps the newest state by keeping the highest version. The database keeps the count (triggers of the
 * migration ResourceVersions, for every writer, an earlier release included); an aggregate's `advanceVersion` is how
 * the code that stores a change keeps its copy in step, so that the change's event carries the version stored.
 */
export const FIRST_VERSION = 1;
