/*
 * A migration drill at size: a store of 1,000,000 pets and 2,000,000 orders served by this release under traffic
 * (orders placed, read back, pages of pets) while migrations written by the rules of docs/development.md
 * ("Migrations without downtime") run through the service's migrator: a new column, a trigger that fills it for
 * writers that do not know it, a backfill in batches, a `NOT VALID` check then validated, an index built
 * `CONCURRENTLY`. It reports the longest `ACCESS EXCLUSIVE` lock held on `orders`, and the requests' latency
 * before and during the migration (p50, p99, max) with their statuses.
 *
 *   npm run build && node -r ./tools/openapi/register.cjs tools/compat/migration-drill.ts [orders] [pets]
 *
 * Needs a PostgreSQL (TEST_DATABASE_URL or one on 127.0.0.1:5432); about five minutes, most of it the seeding.
 * Not part of CI: run it when a release's migrations touch large tables, and keep its numbers in the CHANGELOG.
 */
import { resolve } from 'node:path';
import { migrateDatabase } from '@petstore/infrastructure';
import { Client } from 'pg';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { MIGRATIONS } from '../../libs/infrastructure/src/database/migrations';
import { ADMIN_KEY, createDatabase, databaseServer, dropDatabase, log, startApi } from './support';

const CURRENT_MAIN = resolve(__dirname, '../../dist/apps/api/main.js');
const ORDERS = Number(process.argv[2] ?? 2_000_000);
const PETS = Number(process.argv[3] ?? 1_000_000);
const CLIENTS = 16;
const BATCH = 20_000;

/* The drill's migrations: each an expand step of the rules, after every real migration. */
class OrdersClosedAt1899100000001 implements MigrationInterface {
  name = 'OrdersClosedAt1899100000001';
  async up(q: QueryRunner) {
    // A nullable column without a default: a catalogue change, no rewrite. The trigger fills it for every writer
    // that does not know it (the release before), on insert and on every status change.
    await q.query('ALTER TABLE orders ADD COLUMN closed_at timestamptz');
    await q.query(`CREATE FUNCTION orders_closed_at() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.closed_at := CASE WHEN NEW.status <> 'placed' THEN NEW.status_changed_at END;
        RETURN NEW;
      END $$`);
    await q.query(`CREATE TRIGGER orders_closed_at BEFORE INSERT OR UPDATE OF status, status_changed_at ON orders
      FOR EACH ROW EXECUTE FUNCTION orders_closed_at()`);
  }
  async down(q: QueryRunner) {
    await q.query('DROP TRIGGER orders_closed_at ON orders');
    await q.query('DROP FUNCTION orders_closed_at()');
    await q.query('ALTER TABLE orders DROP COLUMN closed_at');
  }
}

class BackfillOrdersClosedAt1899100000002 implements MigrationInterface {
  name = 'BackfillOrdersClosedAt1899100000002';
  // Outside one transaction: each batch commits on its own, so no row stays locked for long.
  transaction = false as const;
  async up(q: QueryRunner) {
    const [{ hi }] = (await q.query('SELECT coalesce(max(id), 0)::bigint AS hi FROM orders')) as [{ hi: string }];
    for (let from = 0; from <= Number(hi); from += BATCH) {
      await q.query(
        `UPDATE orders SET closed_at = status_changed_at
          WHERE id >= $1 AND id < $2 AND status <> 'placed' AND closed_at IS NULL`,
        [from, from + BATCH],
      );
    }
  }
  async down() {
    return undefined;
  }
}

class OrdersClosedAtCheck1899100000003 implements MigrationInterface {
  name = 'OrdersClosedAtCheck1899100000003';
  async up(q: QueryRunner) {
    // NOT VALID: new rows are checked at once, the existing ones are not scanned under the lock.
    await q.query(`ALTER TABLE orders ADD CONSTRAINT orders_closed_at_ck
      CHECK ((status = 'placed') = (closed_at IS NULL)) NOT VALID`);
  }
  async down(q: QueryRunner) {
    await q.query('ALTER TABLE orders DROP CONSTRAINT orders_closed_at_ck');
  }
}

class ValidateOrdersClosedAt1899100000004 implements MigrationInterface {
  name = 'ValidateOrdersClosedAt1899100000004';
  async up(q: QueryRunner) {
    // The scan, under SHARE UPDATE EXCLUSIVE: reads and writes of orders go on.
    await q.query('ALTER TABLE orders VALIDATE CONSTRAINT orders_closed_at_ck');
  }
  async down() {
    return undefined;
  }
}

class OrdersClosedAtIndex1899100000005 implements MigrationInterface {
  name = 'OrdersClosedAtIndex1899100000005';
  transaction = false as const;
  async up(q: QueryRunner) {
    // A failed earlier try leaves an INVALID index of this name: dropped first, then built again.
    await q.query(`DO $$ BEGIN
      IF EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('orders_closed_at_idx') AND NOT indisvalid)
      THEN DROP INDEX orders_closed_at_idx; END IF; END $$`);
    await q.query('CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_closed_at_idx ON orders (closed_at, id)');
  }
  async down(q: QueryRunner) {
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS orders_closed_at_idx');
  }
}

const DRILL = [
  OrdersClosedAt1899100000001,
  BackfillOrdersClosedAt1899100000002,
  OrdersClosedAtCheck1899100000003,
  ValidateOrdersClosedAt1899100000004,
  OrdersClosedAtIndex1899100000005,
];

interface Sample {
  at: number;
  ms: number;
  status: number;
}

async function seed(url: string) {
  const db = new Client({ connectionString: url });
  await db.connect();
  try {
    const t0 = Date.now();
    await db.query(`INSERT INTO categories (name, name_key) VALUES ('Drill', 'drill')`);
    await db.query(
      `INSERT INTO pets (name, category_id, status)
       SELECT 'Pet ' || g, (SELECT id FROM categories WHERE name_key = 'drill'), 'available'
         FROM generate_series(1, $1) g`,
      [PETS],
    );
    await db.query(`INSERT INTO stock (pet_id, quantity) SELECT id, 1000000 FROM pets ON CONFLICT DO NOTHING`);
    const owner = (
      await db.query(`INSERT INTO accounts (name, role, created_at) VALUES ('Drill', 'customer', now()) RETURNING id`)
    ).rows[0].id as string;
    // Closed orders of the past, as a busy store keeps them: completed or cancelled, one unit each.
    await db.query(
      `INSERT INTO orders (pet_id, owner_id, quantity, complete, created_at, status, status_changed_at)
       SELECT p.lo + (g % $3), $2, 1, g % 2 = 0, now() - interval '1 day', CASE WHEN g % 2 = 0 THEN 'completed'
              ELSE 'cancelled' END, now() - interval '1 day'
         FROM generate_series(1, $1) g, (SELECT min(id) AS lo FROM pets) p`,
      [ORDERS, owner, PETS],
    );
    await db.query(`SELECT setval('orders_id_seq', (SELECT max(id) FROM orders) + 1000)`);
    await db.query('VACUUM (ANALYZE) pets, stock, orders');
    const [{ lo, hi }] = (await db.query('SELECT min(id)::int AS lo, max(id)::int AS hi FROM pets')).rows as [
      { lo: number; hi: number },
    ];
    log(`drill: seeded ${PETS} pets and ${ORDERS} orders in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    return { lo, hi };
  } finally {
    await db.end();
  }
}

/** The longest time any session held ACCESS EXCLUSIVE on `orders`, polled every 10 ms. */
function watchExclusiveLocks(url: string) {
  const db = new Client({ connectionString: url });
  let longestMs = 0;
  let stop = false;
  const done = (async () => {
    await db.connect();
    while (!stop) {
      const { rows } = await db.query<{ ms: number }>(
        `SELECT extract(epoch FROM clock_timestamp() - a.xact_start) * 1000 AS ms
           FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
          WHERE l.relation = 'orders'::regclass AND l.mode = 'AccessExclusiveLock' AND l.granted`,
      );
      for (const row of rows) longestMs = Math.max(longestMs, Number(row.ms));
      await new Promise((r) => setTimeout(r, 10));
    }
    await db.end();
  })();
  return {
    stop: async () => {
      stop = true;
      await done;
      return longestMs;
    },
  };
}

function summary(samples: Sample[]) {
  const ms = samples.map((s) => s.ms).sort((a, b) => a - b);
  const at = (q: number) => (ms.length ? ms[Math.min(ms.length - 1, Math.floor(q * ms.length))].toFixed(1) : '-');
  const statuses = new Map<number, number>();
  for (const s of samples) statuses.set(s.status, (statuses.get(s.status) ?? 0) + 1);
  return (
    `${samples.length} requests, p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms, ` +
    `statuses ${[...statuses.entries()].map(([status, n]) => `${status}×${n}`).join(' ')}`
  );
}

async function main(): Promise<number> {
  const server = await databaseServer();
  if (!server) {
    log('drill: no PostgreSQL (TEST_DATABASE_URL, or one on 127.0.0.1:5432)');
    return 1;
  }
  const name = `petstore_drill_test_${process.pid}`;
  const url = await createDatabase(server, name);
  try {
    const api = await startApi(CURRENT_MAIN, url);
    try {
      const { lo, hi } = await seed(url);
      const samples: Sample[] = [];
      let running = true;
      const request = async (method: string, path: string, body?: unknown) => {
        const started = performance.now();
        const response = await fetch(`${api.baseUrl}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${ADMIN_KEY}`,
            ...(body ? { 'content-type': 'application/json' } : {}),
          },
          body: body ? JSON.stringify(body) : undefined,
        });
        await response.arrayBuffer();
        samples.push({ at: Date.now(), ms: performance.now() - started, status: response.status });
        return response;
      };
      const loops = Array.from({ length: CLIENTS }, async (_, i) => {
        while (running) {
          const petId = lo + Math.floor(Math.random() * (hi - lo));
          if (i % 2 === 0) {
            await request('POST', '/store/orders', { petId, quantity: 1 });
          } else if (i % 4 === 1) {
            await request('GET', '/store/orders?limit=20');
          } else {
            await request('GET', `/pets?ids=${petId},${petId + 1}`);
          }
        }
      });
      await new Promise((r) => setTimeout(r, 10_000));
      const migrationStarted = Date.now();
      const locks = watchExclusiveLocks(url);
      const applied = await migrateDatabase(url, {
        migrations: [...MIGRATIONS, ...DRILL],
        release: '1.1.0',
        log: (entry) => log(`drill: migrator: ${JSON.stringify(entry)}`),
      });
      const migrationEnded = Date.now();
      const longestExclusiveMs = await locks.stop();
      await new Promise((r) => setTimeout(r, 3000));
      running = false;
      await Promise.all(loops);
      const before = samples.filter((s) => s.at < migrationStarted);
      const during = samples.filter((s) => s.at >= migrationStarted && s.at <= migrationEnded);
      log(`drill: applied ${applied.join(', ')} in ${((migrationEnded - migrationStarted) / 1000).toFixed(1)} s`);
      log(`drill: longest ACCESS EXCLUSIVE lock held on orders: ${longestExclusiveMs.toFixed(0)} ms`);
      log(`drill: before the migration (10 s): ${summary(before)}`);
      log(`drill: during the migration: ${summary(during)}`);
      const db = new Client({ connectionString: url });
      await db.connect();
      const { rows } = await db.query(
        `SELECT count(*) FILTER (WHERE (status = 'placed') <> (closed_at IS NULL))::int AS wrong,
                count(*)::int AS orders FROM orders`,
      );
      await db.end();
      log(`drill: ${rows[0].orders} orders after, ${rows[0].wrong} with closed_at not matching their status`);
      return rows[0].wrong === 0 && during.every((s) => s.status < 500) ? 0 : 1;
    } finally {
      await api.stop();
    }
  } finally {
    await dropDatabase(server, name);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
