import { MigrationInterface } from 'typeorm';

/**
 * Retired before any release shipped it: it added `webhook_events.xact_id`, and a column added to `webhook_events`
 * breaks the releases before (1.0.0 and 1.1.0 select `*` from it in prepared statements, which then fail with
 * "cached plan must not change result type" until their connections are recycled). The commit order is now kept
 * beside the table, in `webhook_event_commits` (EventCommits1796000930000). Kept in the list, doing nothing, so that
 * a database that ran it is not taken for one holding a migration this release does not know; on such a database
 * the column stays, unused (a later release may drop it once no release before reads it).
 */
export class EventCommitOrder1796000900000 implements MigrationInterface {
  name = 'EventCommitOrder1796000900000';
  readonly servesFrom = '1.0.0';

  async up(): Promise<void> {
    // Retired: see above.
  }

  async down(): Promise<void> {
    // Retired: see above.
  }
}
