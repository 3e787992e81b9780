import { TEST_DATABASE_ENV, TEST_DATABASE_PREFIX, withDatabaseName } from '@petstore/testing';
import { Client } from 'pg';

/** A database of the test server's, not migrated: for specs of migrating itself. */
export interface ScratchDatabase {
  /** Its URL (a new, empty database for each test). */
  readonly url: string;
}

/**
 * An empty database for each test of the calling `describe` (created before, dropped after), on the run's test
 * server. Its name ends with the run id: a run killed before `afterEach` still has it dropped by the global teardown.
 */
export function useScratchDatabase(label: string): ScratchDatabase {
  let admin: Client;
  let name: string;
  const scratch = { url: '' };
  beforeEach(async () => {
    const serverUrl = process.env[TEST_DATABASE_ENV.serverUrl] as string;
    const runId = process.env[TEST_DATABASE_ENV.runId];
    name = `${TEST_DATABASE_PREFIX}${label}_${Math.random().toString(36).slice(2, 8)}_${runId}`;
    admin = new Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)}`);
    scratch.url = withDatabaseName(serverUrl, name);
  });
  afterEach(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${admin.escapeIdentifier(name)} WITH (FORCE)`);
    await admin.end();
  });
  return scratch;
}
