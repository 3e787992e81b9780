import type { DataSource } from 'typeorm';

/**
 * Tests only: waits until every event committed so far is settled, that is until no transaction older than the
 * newest event's is still in progress on the PostgreSQL server (the transactions of other tests, in other databases
 * of the same server, count too: transaction ids are the server's). A wait for an effect, not a set time.
 */
export async function settledEvents(dataSource: DataSource, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [{ settled }] = await dataSource.query(
      `SELECT NOT EXISTS (SELECT 1 FROM webhook_event_commits
         WHERE xact_id >= pg_snapshot_xmin(pg_current_snapshot())) AS settled`,
    );
    if (settled) return;
    if (Date.now() > deadline) throw new Error(`The events were not settled within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
