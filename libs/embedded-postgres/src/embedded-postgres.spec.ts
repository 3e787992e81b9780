import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { startEmbeddedPostgres } from './embedded-postgres';

async function query<T extends Record<string, unknown>>(url: string, sql: string): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

describe('startEmbeddedPostgres', () => {
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(tmpdir(), 'petstore-embedded-spec-'));
  });

  afterAll(async () => {
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('keeps the data across a stop and a second start on the same directory, despite a stale lock file', async () => {
    const first = await startEmbeddedPostgres({ dataDir, database: 'petstore_spec' });
    try {
      expect(first.url).toMatch(/^postgres:\/\/postgres:.+@127\.0\.0\.1:\d+\/petstore_spec$/);
      await query(first.url, 'CREATE TABLE kept (id int PRIMARY KEY, note text)');
      await query(first.url, "INSERT INTO kept VALUES (1, 'survives a restart')");
    } finally {
      await first.stop();
    }
    await expect(fs.stat(path.join(dataDir, 'postmaster.pid'))).rejects.toThrow();

    // A killed run leaves postmaster.pid behind, naming a pid that is gone.
    const deadPid = await new Promise<number>((resolve) => {
      const { spawn } = jest.requireActual<typeof import('node:child_process')>('node:child_process');
      const child = spawn(process.execPath, ['-e', '']);
      child.on('exit', () => resolve(child.pid as number));
    });
    await fs.writeFile(path.join(dataDir, 'postmaster.pid'), `${deadPid}\n${dataDir}\n0\n1\n`);

    const second = await startEmbeddedPostgres({ dataDir, database: 'petstore_spec' });
    try {
      expect(second.port).not.toBeNaN();
      await expect(query(second.url, 'SELECT id, note FROM kept')).resolves.toEqual([
        { id: 1, note: 'survives a restart' },
      ]);
    } finally {
      await second.stop();
    }
  });
});
