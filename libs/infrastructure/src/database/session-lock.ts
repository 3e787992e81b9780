import { Client } from 'pg';

const TRY_LOCK = 'SELECT pg_try_advisory_lock(hashtext($1)) AS got';
const UNLOCK = 'SELECT pg_advisory_unlock(hashtext($1))';

/**
 * A PostgreSQL session-level advisory lock held on a connection of its own, for work that must run in one process
 * at a time across instances (the event relay). The lock goes with the session: a killed holder never keeps it, and
 * a holder whose session is lost (`lost` resolves) must stop, since another may take the lock at once.
 */
export class SessionLock {
  private released = false;

  private constructor(
    private readonly client: Client,
    private readonly name: string,
    /** Resolves when the session ends other than by `release` (the database restarted, the connection cut). */
    readonly lost: Promise<void>,
  ) {}

  /**
   * Takes the lock `name` on a new session at `url`, trying again every `pollMs` while another session holds it;
   * null when `stopping()` turns true first. Not `pg_advisory_lock`: a session blocked in it sits in an open
   * transaction, which online migrations (CREATE INDEX CONCURRENTLY) would wait for (data-source.ts says more).
   */
  static async acquire(url: string, name: string, stopping: () => boolean, pollMs = 2000): Promise<SessionLock | null> {
    while (!stopping()) {
      const client = new Client({ connectionString: url, application_name: `petstore-lock:${name}` });
      let lose = () => undefined as void;
      const lost = new Promise<void>((resolve) => (lose = resolve));
      client.on('error', () => lose());
      client.on('end', () => lose());
      try {
        await client.connect();
        const { rows } = await client.query<{ got: boolean }>(TRY_LOCK, [name]);
        if (rows[0]?.got === true) return new SessionLock(client, name, lost);
      } catch {
        // The database failed or refused the connection: tried again after the pause.
      }
      await client.end().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, pollMs * (0.5 + Math.random())));
    }
    return null;
  }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    await this.client.query(UNLOCK, [this.name]).catch(() => undefined);
    await this.client.end().catch(() => undefined);
  }
}
