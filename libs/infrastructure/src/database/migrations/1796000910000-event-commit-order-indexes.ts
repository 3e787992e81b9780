import { MigrationInterface } from 'typeorm';

/**
 * Retired with EventCommitOrder1796000900000, whose column it indexed (see there). Kept in the list, doing nothing;
 * the indexes of the commit order are built on `webhook_event_commits` by EventCommitsBackfill1796000940000.
 */
export class EventCommitOrderIndexes1796000910000 implements MigrationInterface {
  name = 'EventCommitOrderIndexes1796000910000';
  readonly servesFrom = '1.0.0';
  readonly transaction = false;

  async up(): Promise<void> {
    // Retired: see above.
  }

  async down(): Promise<void> {
    // Retired: see above.
  }
}
