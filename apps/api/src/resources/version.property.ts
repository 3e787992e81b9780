import type { ApiPropertyOptions } from '@nestjs/swagger';

/**
 * The `version` of a resource (issue 49): 1 when it is created, one more with every stored change of what its
 * representation shows, whoever made it (the database counts them). Optional and read-only in the description: an
 * addition to the specification's schemas, absent from the `data` of events recorded by a release before it.
 */
export function versionProperty(what: string, counts: string): ApiPropertyOptions {
  return {
    description:
      `The version of this ${what}: 1 when created, one more with every change of ${counts}. An event's \`data\` ` +
      `carries the version after its change, so of two events about the same ${what} the higher version is the ` +
      'newer state (events may arrive in any order: apply one only when its version is higher than the one you ' +
      'hold). An addition to the specification.',
    type: 'integer',
    format: 'int64',
    minimum: 1,
    readOnly: true,
    example: 3,
  };
}
