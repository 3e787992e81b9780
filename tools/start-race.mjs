#!/usr/bin/env node
// Starts N instances of the built service at the same moment, ROUNDS times, on one database (empty for the
// first round, live after), and counts how many came up each round: what a deployment of N replicas does.
//
//   node tools/start-race.mjs --database-url postgres://postgres@127.0.0.1:5432/race_test \
//     [--pooled-url postgres://postgres@127.0.0.1:6432/race_test] [--instances 4] [--rounds 10]
//
// With --pooled-url, DATABASE_URL is the pooler's and DATABASE_DIRECT_URL the direct one. The database is
// dropped and created first (its name must contain "test"). Needs `npm run build` first. Prints one line per
// round and a summary; exits 1 if any instance failed to come up.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { parseArgs } from 'node:util';
import pg from 'pg';

const { values } = parseArgs({
  options: {
    'database-url': { type: 'string' },
    'pooled-url': { type: 'string' },
    instances: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '10' },
  },
});
const directUrl = values['database-url'];
if (!directUrl) throw new Error('--database-url is required');
const name = new URL(directUrl).pathname.slice(1);
if (!name.includes('test')) throw new Error(`refusing to drop "${name}": its name must contain "test"`);
const instances = Number(values.instances);
const rounds = Number(values.rounds);

const server = new URL(directUrl);
server.pathname = '/postgres';
const admin = new pg.Client({ connectionString: server.toString() });
await admin.connect();
await admin.query(`DROP DATABASE IF EXISTS ${admin.escapeIdentifier(name)} WITH (FORCE)`);
await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)}`);
await admin.end();

const freePort = () =>
  new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });

async function startOne() {
  const port = await freePort();
  const env = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    MESSAGE_WORKER: 'true',
    DATABASE_URL: values['pooled-url'] ?? directUrl,
    ...(values['pooled-url'] ? { DATABASE_DIRECT_URL: directUrl } : {}),
  };
  const child = spawn(process.execPath, ['dist/apps/api/main.js'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) return { child, up: false, output, ms: Date.now() - started };
    const ready = await fetch(`http://127.0.0.1:${port}/health/ready`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready) return { child, up: true, output, ms: Date.now() - started };
    if (Date.now() - started > 60_000)
      return { child, up: false, output: `${output}\n(not ready in 60 s)`, ms: 60_000 };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function stop(child) {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

let failed = 0;
for (let round = 1; round <= rounds; round++) {
  const results = await Promise.all(Array.from({ length: instances }, startOne));
  const up = results.filter((r) => r.up).length;
  failed += instances - up;
  const slowest = Math.max(...results.map((r) => r.ms));
  console.log(`round ${round}${round === 1 ? ' (empty database)' : ''}: ${up}/${instances} up, slowest ${slowest} ms`);
  for (const r of results.filter((r) => !r.up)) console.log(r.output.trim().split('\n').slice(-3).join('\n'));
  await Promise.all(results.map((r) => stop(r.child)));
}
console.log(
  `${rounds * instances - failed}/${rounds * instances} instances came up (${rounds} rounds of ${instances})`,
);
process.exit(failed ? 1 : 0);
