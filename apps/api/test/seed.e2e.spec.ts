import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { createMigratedDatabase, TEST_DATABASE_ENV, TEST_DATABASE_PREFIX, withDatabaseName } from '@petstore/testing';
import { Client } from 'pg';
import { ApiProcess, BUILT_MAIN, ensureBuilt } from './support/built-app';

// Building (when run without CI's build first) takes a while.
jest.setTimeout(240_000);

const run = promisify(execFile);
const KEY = /^\s+(psk_[A-Za-z0-9_-]{43})$/m;
const TABLES = ['categories', 'pets', 'stock', 'accounts', 'api_keys', 'orders'] as const;
/** Rows after a seed: the demo catalogue (every pet has its stock entry) and one administrator with one key. */
const SEEDED = { categories: 4, pets: 13, stock: 13, accounts: 1, api_keys: 1, orders: 0 };

/** `main.js --seed` (what `npm run seed` runs after building) against a database of its own. */
async function seed(databaseUrl: string): Promise<string> {
  const { stdout } = await run(process.execPath, [BUILT_MAIN, '--seed'], {
    // Without ADMIN_API_KEY (unset: the service refuses a variable set but empty).
    env: {
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'ADMIN_API_KEY')),
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'warn',
    },
  });
  return stdout;
}

/**
 * `npm run seed` on a real PostgreSQL, through the built app as users run it: the first run fills an
 * empty database and prints an administrator key that works; any later run changes nothing.
 */
describe('npm run seed (main.js --seed)', () => {
  let server: Client;
  let serverUrl: string;
  const databases: string[] = [];

  /** An empty database, or a `migrated` one (a copy of the run's migrated template). */
  async function freshDatabase(suffix: string, { migrated = false } = {}): Promise<{ url: string; client: Client }> {
    const name = `${TEST_DATABASE_PREFIX}seed_${suffix}_${process.env[TEST_DATABASE_ENV.runId]}`;
    await server.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    if (migrated) await createMigratedDatabase(server, name);
    else await server.query(`CREATE DATABASE ${name}`);
    databases.push(name);
    const url = withDatabaseName(serverUrl, name);
    const client = new Client({ connectionString: url });
    await client.connect();
    return { url, client };
  }

  async function counts(client: Client): Promise<Record<string, number>> {
    const result: Record<string, number> = {};
    for (const table of TABLES) {
      result[table] = Number((await client.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
    }
    return result;
  }

  beforeAll(async () => {
    ensureBuilt();
    const url = process.env[TEST_DATABASE_ENV.serverUrl];
    if (!url) throw new Error('no test database server (libs/testing global setup)');
    serverUrl = url;
    server = new Client({ connectionString: serverUrl });
    await server.connect();
  });

  afterAll(async () => {
    for (const name of databases) await server.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await server?.end();
  });

  it('fills an empty database once, prints a working administrator key once, then changes nothing', async () => {
    const { url, client } = await freshDatabase('twice');
    let api: ApiProcess | undefined;
    try {
      const first = await seed(url);
      const key = KEY.exec(first)?.[1];
      expect(key).toBeDefined();
      const afterFirst = await counts(client);
      expect(afterFirst).toEqual(SEEDED);
      const statuses = await client.query(
        `SELECT p.status, count(*)::int AS pets, sum(i.quantity)::int AS units
           FROM pets p JOIN stock i ON i.pet_id = p.id GROUP BY p.status ORDER BY p.status`,
      );
      expect(statuses.rows).toEqual([
        { status: 'available', pets: 7, units: 83 },
        { status: 'pending', pets: 3, units: 0 },
        { status: 'sold', pets: 3, units: 0 },
      ]);
      const stored = await client.query('SELECT * FROM api_keys');
      expect(JSON.stringify(stored.rows)).not.toContain(String(key));

      const second = await seed(url);
      expect(second).toContain('changed nothing');
      expect(second).not.toMatch(/psk_/);
      expect(await counts(client)).toEqual(afterFirst);

      // Started next with ADMIN_API_KEY, as the README suggests: that administrator is added, the seed's key stays.
      const adminKey = randomBytes(24).toString('hex');
      api = await ApiProcess.start({ DATABASE_URL: url, ADMIN_API_KEY: adminKey, LOG_LEVEL: 'warn' });
      const me = await api.request('GET', '/accounts/me', { key });
      expect(me.status).toBe(200);
      expect(me.body.role).toBe('admin');
      const bootstrap = await api.request('GET', '/accounts/me', { key: adminKey });
      expect(bootstrap.body).toMatchObject({ role: 'admin' });
      expect(bootstrap.body.id).not.toBe(me.body.id);
      const sold = await api.request('GET', '/pets?status=sold', { key });
      expect(sold.body.map((pet: { name: string }) => pet.name).sort()).toEqual(['Betta', 'Cleo', 'Old Bob']);
      // An administrator operation: the key is an administrator's, not a customer's.
      const created = await api.request('POST', '/categories', { key, body: { name: 'Reptiles' } });
      expect(created.status).toBe(201);
    } finally {
      expect(await api?.stop()).toBe(api ? 0 : undefined);
      await client.end();
    }
  });

  it('two seeds at once fill the database once: one prints a key, the other changes nothing', async () => {
    // Migrated first (the first test shows the seed migrating an empty database), so that both seeds race on the
    // data, not on the migrations' lock: a copy of the run's migrated template, no process run for it.
    const { url, client } = await freshDatabase('concurrent', { migrated: true });
    try {
      const outputs = await Promise.all([seed(url), seed(url)]);
      expect(outputs.filter((output) => KEY.test(output))).toHaveLength(1);
      expect(outputs.filter((output) => output.includes('changed nothing'))).toHaveLength(1);
      expect(await counts(client)).toEqual(SEEDED);
    } finally {
      await client.end();
    }
  });
});
