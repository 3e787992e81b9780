import { Client } from 'pg';
import { MIGRATION_LOCK } from './data-source';
import { migrateDatabase } from './migrator';
import { MIGRATIONS } from './migrations';
import { useScratchDatabase } from '../../test/support/scratch-database';

async function connect(url: string): Promise<Client> {
  const client = new Client({ connectionString: url });
  await client.connect();
  return client;
}

describe('migrateDatabase (real PostgreSQL)', () => {
  const scratch = useScratchDatabase('migrate');

  it('migrates an empty database exactly once when two instances start together (advisory lock)', async () => {
    const holder = await connect(scratch.url);
    try {
      // The test holds the lock first, so that both migrators surely start before either may proceed.
      await holder.query('SELECT pg_advisory_lock(hashtext($1))', [MIGRATION_LOCK]);
      const both = Promise.all([migrateDatabase(scratch.url), migrateDatabase(scratch.url)]);
      await waitForLockWaiters(holder, 2);
      await holder.query('SELECT pg_advisory_unlock(hashtext($1))', [MIGRATION_LOCK]);

      const [first, second] = await both;
      const all = MIGRATIONS.map((migration) => migration.name);
      // One applied every migration, the other found none pending.
      expect([first, second].map((applied) => applied.length).sort()).toEqual([0, all.length]);
      expect([...first, ...second].sort()).toEqual([...all].sort());
      const { rows } = await holder.query<{ name: string; runs: number }>(
        'SELECT name, count(*)::int AS runs FROM schema_migrations GROUP BY name ORDER BY name',
      );
      expect(rows).toEqual([...all].sort().map((migration) => ({ name: migration, runs: 1 })));
    } finally {
      await holder.end();
    }
  });

  it('releases the lock when it is done, and again finds nothing pending', async () => {
    expect((await migrateDatabase(scratch.url)).length).toBe(MIGRATIONS.length);
    await expect(migrateDatabase(scratch.url)).resolves.toEqual([]);
    const client = await connect(scratch.url);
    try {
      const { rows } = await client.query<{ got: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS got', [
        MIGRATION_LOCK,
      ]);
      expect(rows).toEqual([{ got: true }]);
    } finally {
      await client.end();
    }
  });
});

/** Polls until `count` other sessions of this database have tried the migration lock (at most 30 s). */
async function waitForLockWaiters(client: Client, count: number): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    const { rows } = await client.query<{ waiting: number }>(
      `SELECT count(*)::int AS waiting FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE '%pg_try_advisory_lock%'`,
    );
    if (rows[0].waiting >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`fewer than ${count} sessions ever waited for the migration lock`);
}
