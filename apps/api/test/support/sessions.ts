import type { ClientBase } from 'pg';

/**
 * What the other sessions of this database are doing, read through `client`.
 *
 * PostgreSQL reads pg_stat_activity once per transaction and keeps that snapshot until the transaction ends. A
 * test polls from the session that holds the lock others should wait for, inside its transaction: without
 * pg_stat_clear_snapshot() every poll after the first saw the first answer (0 waiters, if the requests had not
 * reached the lock yet), and the test waited out its deadline while the requests waited for the lock.
 */
async function countOthers(client: ClientBase, condition: string): Promise<number> {
  await client.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await client.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND ${condition}`,
  );
  return rows[0].n;
}

/** How many other sessions wait for a lock now. */
export function lockWaiters(client: ClientBase): Promise<number> {
  return countOthers(client, `wait_event_type = 'Lock'`);
}

/** How many other sessions are inside a transaction now. */
export function sessionsInTransaction(client: ClientBase): Promise<number> {
  return countOthers(client, 'xact_start IS NOT NULL');
}
