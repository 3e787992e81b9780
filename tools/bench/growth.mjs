// Ten times the data (issue 34 item 3): what a busy store accumulates, seeded with SQL like the pets, and the parts of
// the bench that only it can show: the event feed's pages at that size, the hourly purge of a day's events while
// orders run, and what the tables and indexes weigh per 1,000,000 rows.
//
// BENCH_ORDERS and BENCH_EVENTS (both 0 by default: the bench as before) add that many orders and events, spread over
// EVENT_RETENTION_DAYS + 1 days (30 + 1), oldest first, as the service writes them: the oldest day is past retention,
// which is what the purge removes. Owners are BENCH_CUSTOMERS customer accounts; one of them, the bench customer (a key
// of its own, made through POST /accounts), owns 1 event in 1,000. One event in 10,000 is of a rare type.
import { randomBytes } from 'node:crypto';

export const RETENTION_DAYS = 30;
/** The rare type the filtered feed asks for (1 event in RARE_EVERY). */
export const RARE_TYPE = 'message.delivered';
const RARE_EVERY = 10_000;
const CUSTOMER_EVERY = 1_000;
/** What the service's purge deletes per statement (EventRetention.DEFAULT_BATCH). */
export const PURGE_BATCH_SIZE = 10_000;
/** The rest after each batch, as a share of the time it took (EventRetention.restRatio: PurgeEvents rests so). */
export const PURGE_REST_RATIO = Number(process.env.BENCH_PURGE_REST_RATIO ?? 2);
/**
 * The service's purge statement (PgEventLog.purgeBatch in libs/infrastructure/src/persistence): the bench runs it
 * from outside so that the purge's timing is the bench's to choose (the service runs it hourly from pg-boss).
 */
export const PURGE_BATCH_SQL = `DELETE FROM webhook_events WHERE ctid = ANY (ARRAY(
         SELECT ctid FROM webhook_events WHERE created_at < $1 LIMIT $2))`;

const seconds = (t0) => ((Date.now() - t0) / 1000).toFixed(1);

/** The bench customer: an account and key made through the API (POST /accounts), as a new customer would. */
export async function benchCustomer(base) {
  const response = await fetch(`${base}/accounts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: `Bench customer ${randomBytes(4).toString('hex')}` }),
  });
  if (response.status !== 201) throw new Error(`POST /accounts answered ${response.status}: ${await response.text()}`);
  const body = await response.json();
  return { accountId: body.account.id, secret: body.apiKey.key };
}

/**
 * Seeds `orders` orders and `events` events (in chunks of a million, so that no statement holds a huge snapshot), then
 * VACUUM ANALYZE. Returns the seq range of the events and the bench customer's.
 */
export async function seedHistory(db, { orders, events, customers, petLo, petHi, customerId }) {
  const t0 = Date.now();
  const { rows } = await db.query(
    `INSERT INTO accounts (name, role, created_at)
     SELECT 'Bench owner ' || g, 'customer', now() FROM generate_series(1, $1) g RETURNING id`,
    [customers],
  );
  const owners = rows.map((r) => Number(r.id));
  const ownerLo = Math.min(...owners);
  const span = `interval '${RETENTION_DAYS + 1} days'`;
  const chunk = 1_000_000;
  for (let from = 1; from <= orders; from += chunk) {
    const to = Math.min(orders, from + chunk - 1);
    // The newest 1 in 100 still open (placed: older ones would have expired), the rest completed; created oldest first
    // over the retention and a day.
    await db.query(
      `INSERT INTO orders (pet_id, owner_id, quantity, ship_date, status, complete, created_at, status_changed_at)
       SELECT $3::bigint + (g * 7919) % ($4::bigint - $3::bigint + 1), $5::bigint + g % $6::bigint, 1, NULL,
              CASE WHEN g > $7::bigint * 99 / 100 THEN 'placed' ELSE 'completed' END, g <= $7::bigint * 99 / 100, t, t
         FROM generate_series($1::bigint, $2::bigint) g,
              LATERAL (SELECT now() - ${span} + (g::float8 / $7::float8) * ${span} AS t) at`,
      [from, to, petLo, petHi, ownerLo, owners.length, orders],
    );
  }
  if (orders) console.log(`seeded ${orders} orders in ${seconds(t0)} s`);
  const t1 = Date.now();
  for (let from = 1; from <= events; from += chunk) {
    const to = Math.min(events, from + chunk - 1);
    await db.query(
      `INSERT INTO webhook_events (id, type, subject_owner_id, endpoint_id, body, created_at)
       SELECT gen_random_uuid(), k.type, k.owner, NULL,
              json_build_object('type', k.type, 'timestamp', t,
                'data', json_build_object('id', g, 'petId', 1 + g % 1000000, 'quantity', 1, 'status', 'placed',
                                          'complete', false))::text,
              t
         FROM generate_series($1::bigint, $2::bigint) g,
              LATERAL (SELECT now() - ${span} + (g::float8 / $3::float8) * ${span} AS t) at,
              LATERAL (SELECT CASE WHEN g % ${RARE_EVERY} = 0 THEN '${RARE_TYPE}' ELSE 'order.placed' END AS type,
                              CASE WHEN g % ${CUSTOMER_EVERY} = 0 THEN $4::bigint
                                   ELSE $5::bigint + g % $6::bigint END AS owner) k`,
      [from, to, events, customerId, ownerLo, owners.length],
    );
  }
  if (events) console.log(`seeded ${events} events in ${seconds(t1)} s`);
  const t2 = Date.now();
  await db.query('VACUUM (ANALYZE) orders, webhook_events, accounts');
  await db.query('CHECKPOINT');
  console.log(`vacuumed in ${seconds(t2)} s`);
  const seq = (
    await db.query(
      `SELECT min(seq)::bigint AS lo, max(seq)::bigint AS hi,
              (SELECT min(seq) FROM webhook_events WHERE subject_owner_id = $1 AND endpoint_id IS NULL)::bigint AS mine
         FROM webhook_events WHERE endpoint_id IS NULL`,
      [customerId],
    )
  ).rows[0];
  return { seqLo: Number(seq.lo ?? 0), seqHi: Number(seq.hi ?? 0), customerSeqLo: Number(seq.mine ?? 0) };
}

/** Table, index and TOAST sizes of the growing tables, and per 1,000,000 rows. */
export async function tableSizes(db) {
  const { rows } = await db.query(
    `SELECT c.relname AS table, c.reltuples::bigint AS rows,
            pg_relation_size(c.oid) AS heap, pg_indexes_size(c.oid) AS indexes,
            pg_total_relation_size(c.oid) AS total
       FROM pg_class c WHERE c.relname IN ('orders', 'webhook_events', 'pets', 'stock', 'api_keys')
      ORDER BY c.relname`,
  );
  const mb = (bytes) => Math.round(Number(bytes) / 1024 / 1024);
  return rows.map((r) => {
    // reltuples is -1 for a table never vacuumed nor analyzed: no estimate.
    const millions = Math.max(Number(r.rows), 0) / 1_000_000;
    const per = (bytes) => (millions > 0 ? Math.round(Number(bytes) / 1024 / 1024 / millions) : null);
    return {
      table: r.table,
      rows: Math.max(Number(r.rows), 0),
      heapMb: mb(r.heap),
      indexesMb: mb(r.indexes),
      totalMb: mb(r.total),
      heapMbPerMillion: per(r.heap),
      indexesMbPerMillion: per(r.indexes),
      totalMbPerMillion: per(r.total),
    };
  });
}

/**
 * The purge of a day's events (everything older than the retention), run in the service's batches and rests
 * (BENCH_PURGE_REST_RATIO: 0 for none) on `db` until none is left. `pause()` resolves once the batch under way has
 * ended and no other starts until `resume()`: the bench measures rounds with the purge running and paused in turns.
 * `done` resolves with the seconds it took; `stop()` ends it after the batch under way.
 */
export function startPurge(db) {
  const before = new Date(Date.now() - RETENTION_DAYS * 24 * 3600 * 1000);
  const state = { purged: 0, batches: 0 };
  let paused = false;
  let stopped = false;
  let parked = null; // resolves the pause() under way once the loop waits
  let wake = null; // resumes the loop
  const t0 = Date.now();
  const done = (async () => {
    while (!stopped) {
      if (paused) {
        parked?.();
        await new Promise((resolve) => (wake = resolve));
        continue;
      }
      const started = Date.now();
      const { rowCount } = await db.query(PURGE_BATCH_SQL, [before, PURGE_BATCH_SIZE]);
      state.purged += rowCount;
      state.batches++;
      if (rowCount < PURGE_BATCH_SIZE) break;
      const rest = (Date.now() - started) * PURGE_REST_RATIO;
      if (rest >= 1) await new Promise((resolve) => setTimeout(resolve, rest));
    }
    parked?.();
    return +((Date.now() - t0) / 1000).toFixed(1);
  })();
  return {
    state,
    done,
    pause: () => {
      paused = true;
      return new Promise((resolve) => (parked = resolve));
    },
    resume: () => {
      paused = false;
      wake?.();
    },
    stop: () => {
      stopped = true;
      wake?.();
    },
  };
}
