import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  PASSWORD_FILE,
  embeddedPostgresNativeDir,
  reachableNativeDir,
  startEmbeddedPostgres,
} from './embedded-postgres';

const passwordOf = (url: string) => decodeURIComponent(new URL(url).password);

async function query<T extends Record<string, unknown>>(url: string, sql: string): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

// Each test starts PostgreSQL once or twice (initdb takes seconds on a busy machine).
jest.setTimeout(120_000);

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

  it('gives each new cluster a random superuser password, kept in the data directory for its owner only', async () => {
    const dirs = [await fs.mkdtemp(path.join(tmpdir(), 'petstore-embedded-pw-')), path.join(dataDir, 'second')];
    const passwords: string[] = [];
    try {
      for (const dir of dirs) {
        const server = await startEmbeddedPostgres({ dataDir: dir, database: 'petstore_spec' });
        try {
          const file = path.join(dir, PASSWORD_FILE);
          expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
          expect((await fs.readFile(file, 'utf8')).trim()).toBe(passwordOf(server.url));
          await expect(query(server.url, 'SELECT 1 AS one')).resolves.toEqual([{ one: 1 }]);
          passwords.push(passwordOf(server.url));
        } finally {
          await server.stop();
        }
      }
    } finally {
      await fs.rm(dirs[0], { recursive: true, force: true });
    }
    expect(passwords[0]).not.toBe(passwords[1]);
    expect(passwords.every((p) => p.length >= 32 && p !== 'petstore-embedded')).toBe(true);
  });

  it('replaces the old constant password of a cluster made before random passwords, keeping its data', async () => {
    const dir = path.join(dataDir, 'legacy');
    // Make a cluster as the old code left it: password 'petstore-embedded', no password file.
    const first = await startEmbeddedPostgres({ dataDir: dir, database: 'petstore_spec' });
    try {
      await query(first.url, "CREATE TABLE kept (note text); INSERT INTO kept VALUES ('from before')");
      await query(first.url, "ALTER ROLE postgres PASSWORD 'petstore-embedded'");
    } finally {
      await first.stop();
    }
    await fs.rm(path.join(dir, PASSWORD_FILE));

    const second = await startEmbeddedPostgres({ dataDir: dir, database: 'petstore_spec' });
    try {
      const password = passwordOf(second.url);
      expect(password).not.toBe('petstore-embedded');
      expect((await fs.readFile(path.join(dir, PASSWORD_FILE), 'utf8')).trim()).toBe(password);
      expect((await fs.stat(path.join(dir, PASSWORD_FILE))).mode & 0o777).toBe(0o600);
      await expect(query(second.url, 'SELECT note FROM kept')).resolves.toEqual([{ note: 'from before' }]);
      const old = new URL(second.url);
      old.password = 'petstore-embedded';
      await expect(query(old.toString(), 'SELECT 1')).rejects.toThrow(/password authentication failed/);
    } finally {
      await second.stop();
    }
  });

  const asRoot = process.getuid?.() === 0 ? it : it.skip;
  asRoot('as root, runs binaries the postgres user cannot reach from a mirror it can (checkout in /root)', async () => {
    // A copy of the binaries (hard links) below a directory only root may enter, as in a checkout under /root.
    const native = embeddedPostgresNativeDir();
    const closed = await fs.mkdtemp(path.join(tmpdir(), 'petstore-closed-'));
    try {
      await fs.chmod(closed, 0o700);
      execFileSync('cp', ['-al', native, path.join(closed, 'native')]);
      const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
      const postgresUser = { uid: id('-u'), gid: id('-g') };
      const version = (dir: string) =>
        spawnSync(path.join(dir, 'bin', 'postgres'), ['--version'], { ...postgresUser, encoding: 'utf8' });

      expect(version(path.join(closed, 'native')).error).toMatchObject({ code: 'EACCES' }); // what initdb met

      const reachable = await reachableNativeDir(path.join(closed, 'native'), postgresUser);
      expect(reachable.startsWith(closed)).toBe(false);
      expect(version(reachable).stdout).toMatch(/^postgres \(PostgreSQL\) 17/);
      // made once: a second start reuses it
      await expect(reachableNativeDir(path.join(closed, 'native'), postgresUser)).resolves.toBe(reachable);
      await fs.rm(reachable, { recursive: true, force: true });
    } finally {
      await fs.rm(closed, { recursive: true, force: true });
    }
  });
});
