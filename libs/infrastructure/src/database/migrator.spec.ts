import { Client } from 'pg';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { MIGRATION_LOCK } from './data-source';
import { MIGRATIONS } from './migrations';
import { useScratchDatabase } from '../../test/support/scratch-database';
import {
  compareVersions,
  migrateDatabase,
  MigrationFailedError,
  MigrationLogEntry,
  MigrationPrecheckError,
  NewerSchemaError,
} from './migrator';

async function connect(url: string): Promise<Client> {
  const client = new Client({ connectionString: url });
  await client.connect();
  return client;
}

// Test migrations after every real one (TypeORM orders them by the 13-digit timestamp ending their names).
class CreateWidgets1899000000001 implements MigrationInterface {
  name = 'CreateWidgets1899000000001';
  async up(q: QueryRunner) {
    await q.query('CREATE TABLE widgets (id int PRIMARY KEY)');
  }
  async down(q: QueryRunner) {
    await q.query('DROP TABLE widgets');
  }
}
class RefusedByPrecheck1899000000002 implements MigrationInterface {
  name = 'RefusedByPrecheck1899000000002';
  async precheck() {
    return ['2 widgets would collide'];
  }
  async up(q: QueryRunner) {
    await q.query('CREATE TABLE never (id int)');
  }
  async down() {
    return undefined;
  }
}
class Fails1899000000003 implements MigrationInterface {
  name = 'Fails1899000000003';
  async up(q: QueryRunner) {
    await q.query('CREATE TABLE half (id int)');
    await q.query('SELECT 1/0');
  }
  async down() {
    return undefined;
  }
}
class AlterPets1899000000004 implements MigrationInterface {
  name = 'AlterPets1899000000004';
  servesFrom = '1.0.0';
  async up(q: QueryRunner) {
    await q.query('ALTER TABLE pets ADD COLUMN nickname text');
  }
  async down(q: QueryRunner) {
    await q.query('ALTER TABLE pets DROP COLUMN nickname');
  }
}

describe('migrateDatabase on a live database (real PostgreSQL)', () => {
  const scratch = useScratchDatabase('migrator');

  async function tables(...names: string[]): Promise<string[]> {
    const client = await connect(scratch.url);
    try {
      const { rows } = await client.query<{ name: string }>(
        'SELECT tablename AS name FROM pg_tables WHERE tablename = ANY($1::text[]) ORDER BY 1',
        [names],
      );
      return rows.map((row) => row.name);
    } finally {
      await client.end();
    }
  }

  describe('a database migrated by a newer release', () => {
    async function migratedByNewer(servesFrom: string | null) {
      await migrateDatabase(scratch.url, { release: '1.1.0' });
      const client = await connect(scratch.url);
      try {
        await client.query(
          `INSERT INTO schema_migrations ("timestamp", name) VALUES (1899999999999, 'Future1899999999999')`,
        );
        if (servesFrom) {
          await client.query(`INSERT INTO schema_migration_releases (name, serves_from) VALUES ($1, $2)`, [
            'Future1899999999999',
            servesFrom,
          ]);
        }
      } finally {
        await client.end();
      }
    }

    it('is refused, naming the migrations this release does not know', async () => {
      await migratedByNewer(null);
      const refusal = migrateDatabase(scratch.url, { release: '1.1.0' });
      await expect(refusal).rejects.toBeInstanceOf(NewerSchemaError);
      await expect(refusal).rejects.toThrow(
        'The database was migrated by a newer release: Future1899999999999 is a migration this release (1.1.0)',
      );
    });

    it('is refused when the newer release marked its migration as served from a later version only', async () => {
      await migratedByNewer('1.2.0');
      await expect(migrateDatabase(scratch.url, { release: '1.1.0' })).rejects.toBeInstanceOf(NewerSchemaError);
    });

    it('is served when the newer release marked its migration as served by this version (an expand step)', async () => {
      await migratedByNewer('1.1.0');
      await expect(migrateDatabase(scratch.url, { release: '1.1.0' })).resolves.toEqual([]);
    });
  });

  it("records each migration's oldest serving release, for older releases started later", async () => {
    await migrateDatabase(scratch.url, { release: '1.1.0' });
    const client = await connect(scratch.url);
    try {
      const { rows } = await client.query<{ name: string; serves_from: string }>(
        'SELECT name, serves_from FROM schema_migration_releases ORDER BY name',
      );
      expect(rows).toHaveLength(MIGRATIONS.length);
      // Declared by the migration (an expand step the release before serves), else the release that applied it.
      expect(rows).toContainEqual({ name: 'SchemaMigrationReleases1796000800000', serves_from: '1.0.0' });
      expect(rows).toContainEqual({ name: 'OrderIdBlocks1796000700000', serves_from: '1.1.0' });
    } finally {
      await client.end();
    }
  });

  it("runs every pending migration's precheck before any of them commits", async () => {
    await migrateDatabase(scratch.url);
    const refusal = migrateDatabase(scratch.url, {
      migrations: [...MIGRATIONS, CreateWidgets1899000000001, RefusedByPrecheck1899000000002],
    });
    await expect(refusal).rejects.toBeInstanceOf(MigrationPrecheckError);
    await expect(refusal).rejects.toThrow(
      'Migrations not started, nothing was changed: RefusedByPrecheck1899000000002: 2 widgets would collide',
    );
    // The migration before the refused one did not run either.
    expect(await tables('widgets', 'never')).toEqual([]);
  });

  it('says which migrations committed before the one that failed, and which did not run', async () => {
    await migrateDatabase(scratch.url);
    const failure = migrateDatabase(scratch.url, {
      migrations: [...MIGRATIONS, CreateWidgets1899000000001, Fails1899000000003, AlterPets1899000000004],
    });
    await expect(failure).rejects.toBeInstanceOf(MigrationFailedError);
    await expect(failure).rejects.toThrow(
      new RegExp(
        '^Migration Fails1899000000003 failed and was rolled back: .*division by zero.*\\. ' +
          'Committed before it in this run: CreateWidgets1899000000001\\. Not run: AlterPets1899000000004\\.$',
      ),
    );
    expect(await tables('widgets', 'half')).toEqual(['widgets']);
  });

  it("prints nothing of its own, TypeORM's failure line included: every line goes to the log callback", async () => {
    await migrateDatabase(scratch.url);
    const printed = [jest.spyOn(console, 'log'), jest.spyOn(console, 'error'), jest.spyOn(process.stdout, 'write')];
    const entries: MigrationLogEntry[] = [];
    try {
      await expect(
        migrateDatabase(scratch.url, {
          migrations: [...MIGRATIONS, Fails1899000000003],
          log: (entry) => entries.push(entry),
        }),
      ).rejects.toBeInstanceOf(MigrationFailedError);
    } finally {
      for (const spy of printed) spy.mockRestore();
    }
    for (const spy of printed) expect(spy).not.toHaveBeenCalled();
    // TypeORM's progress, as entries; its "Migration … failed" line is not repeated (the error says it once).
    expect(entries.length).toBeGreaterThan(0);
    expect(entries.some((entry) => /failed/i.test(entry.msg))).toBe(false);
  });

  it('waits for another instance holding the migration lock longer than the lock timeout', async () => {
    const holder = await connect(scratch.url);
    try {
      await holder.query('SELECT pg_advisory_lock(hashtext($1))', [MIGRATION_LOCK]);
      const migrating = migrateDatabase(scratch.url, { settings: { lockTimeoutMs: 50 } });
      // Ten lock timeouts and more: a start-up that lost the race waits, it does not fail.
      await new Promise((resolve) => setTimeout(resolve, 600));
      await holder.query('SELECT pg_advisory_unlock(hashtext($1))', [MIGRATION_LOCK]);
      await expect(migrating).resolves.toHaveLength(MIGRATIONS.length);
    } finally {
      await holder.end();
    }
  });

  it('gives up a lock it cannot get within the lock timeout, then tries again and migrates', async () => {
    await migrateDatabase(scratch.url);
    const blocker = await connect(scratch.url);
    const log: MigrationLogEntry[] = [];
    try {
      // A long transaction of the service holding the table (any lock conflicts with ALTER TABLE's).
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE pets IN ACCESS SHARE MODE');
      const migrating = migrateDatabase(scratch.url, {
        migrations: [...MIGRATIONS, AlterPets1899000000004],
        settings: { lockTimeoutMs: 100, retryBaseMs: 100, attempts: 20 },
        log: (entry) => log.push(entry),
      });
      // While it waits, other statements on the table are not queued behind it for longer than its lock timeout.
      await waitFor(() => log.some((entry) => entry.level === 'warn'));
      await blocker.query('COMMIT');
      await expect(migrating).resolves.toEqual(['AlterPets1899000000004']);
    } finally {
      await blocker.end();
    }
    expect(log.find((entry) => entry.level === 'warn')).toMatchObject({
      migration: 'AlterPets1899000000004',
      statement: 'ALTER TABLE pets ADD COLUMN nickname text',
      sqlstate: '55P03',
      attempt: 1,
    });
  });

  it('fails after the bounded tries, saying what committed', async () => {
    await migrateDatabase(scratch.url);
    const blocker = await connect(scratch.url);
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE pets IN ACCESS SHARE MODE');
      await expect(
        migrateDatabase(scratch.url, {
          migrations: [...MIGRATIONS, CreateWidgets1899000000001, AlterPets1899000000004],
          settings: { lockTimeoutMs: 50, retryBaseMs: 10, attempts: 2 },
        }),
      ).rejects.toThrow(
        new RegExp(
          '^Migration AlterPets1899000000004 failed and was rolled back: .*lock timeout.*' +
            'Committed before it in this run: CreateWidgets1899000000001\\.\\s*$',
        ),
      );
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
  });
});

describe('compareVersions', () => {
  it('orders semantic versions by their numbers', () => {
    expect(compareVersions('1.10.0', '1.9.2')).toBe(1);
    expect(compareVersions('1.0.0', '1.0.0')).toBe(0);
    expect(compareVersions('1.0.0', '1.1.0')).toBe(-1);
    expect(compareVersions('2.0.0-rc.1', '2.0.0')).toBe(0);
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 300 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  if (!condition()) throw new Error('the condition never held');
}
