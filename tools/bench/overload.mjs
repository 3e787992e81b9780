// The overload scenario of `npm run bench`: what one instance does when offered twice what it can serve.
//
// 1. Capacity: a closed loop (BENCH_CONNECTIONS connections, BENCH_SECONDS) on a page read; its req/s is the
//    capacity and its p99 the unloaded p99 the admitted requests are held to.
// 2. Overload: twice the capacity offered as an open-loop rate (openLoop, below: one request every 1/rate s, whatever
//    the answers do) over up to BENCH_OVERLOAD_CONNECTIONS (1,000) connections for BENCH_OVERLOAD_SECONDS (20 s),
//    while a prober opens a new connection to `GET /health/live` every 100 ms, as an orchestrator's liveness probe
//    does. A request's latency counts from when it was due, so time spent waiting for a free connection is in it.
// 3. Right after: `GET /health/ready` must answer 200 within a second.
//
// Each mode of ADMISSION (BENCH_OVERLOAD_MODES, default `on,off`) runs on an instance of its own, started for it
// and stopped after, so the other scenarios' instances never see this load. Targets (issue 48): goodput ≥ 0.8 of
// capacity (issue 34 asked 0.9, above what one thread can do when a refusal costs ~7 % of a served read; see
// docs/operations.md), admitted p99 ≤ 3× the unloaded p99, shed answers' p99 ≤ 50 ms, `/health/live` p99 ≤ 100 ms,
// ready right after. The capacity run's per-status latencies come from autocannon's 'response' event.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createConnection } from 'node:net';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const round1 = (n) => (n === null ? null : Math.round(n * 10) / 10);

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** One GET on a connection of its own (no keep-alive agent): its status and milliseconds, or its error. */
function probe(base, path, timeoutMs) {
  return new Promise((resolve) => {
    const started = performance.now();
    const req = request(`${base}${path}`, { agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - started }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (error) => resolve({ status: 0, ms: performance.now() - started, error: error.message }));
    req.end();
  });
}

/**
 * `GET /health/live` every 100 ms on a new connection each time, from a child process (this file run as a script:
 * `probe` below), until `stop()`, which resolves to the probes' results.
 */
function startProber(base) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--probe', base], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    async stop() {
      child.stdin.end(); // its cue to finish the probe in progress and exit
      await exited;
      return output
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line));
    },
  };
}

if (process.argv[2] === '--probe') {
  const base = process.argv[3];
  let running = true;
  process.stdin.on('end', () => (running = false)).resume();
  while (running) {
    const next = sleep(100);
    process.stdout.write(`${JSON.stringify(await probe(base, '/health/live', 5_000))}\n`);
    await next;
  }
  process.exit(0);
}

/** Requests at a time that prime the connections before the load (well under any admission limit's floor). */
const PRIME_CONCURRENCY = 20;

/**
 * An open-loop load: `rate` requests a second for `seconds`, each sent when it is due (a 1 ms tick sends every request
 * due by then), over `connections` keep-alive connections opened (and each used once) first; a request finding every
 * connection busy waits for the first to come free (HTTP/1.1, no pipelining), and that wait is part of its latency.
 * Returns the latencies (ms) by status, what was sent, the errors and timeouts, the seconds from the first request due
 * to the last answer (the served rate's denominator: an instance that queues everything answers the 20 s of load over
 * a longer time), and the generator's own lateness (`sendLagMs`: from due to written, for the requests that found a
 * free connection; `loopDelayMs`: this process's event-loop delay). `timeline`, an array, receives [ms since the start
 * when due, latency ms, status] per answer: where in the run the slow answers were.
 *
 * Hand-written, twice over. A rate: autocannon's (`overallRate`, `connectionRate`) is a budget per connection and per
 * second, reset by a 1 s interval each client starts when created (autocannon/lib/httpClient.js): 1,000 connections
 * spend their budget at the start of every second, a burst of 1,000 requests and then silence, not a rate (measured
 * so, an instance refused nine in ten of each burst and idled the rest of the second); wrk2 is not packaged here, and
 * the npm load generators with a rate (loadtest, autocannon) pace per connection the same way. Raw sockets: through
 * Node's http client (an Agent, a ClientRequest and an IncomingMessage per request) the generator spent about 0.6 of
 * its core at twice capacity, and its own delay (a request's time counts from when it was due) was in the latencies
 * it reported: two runs put the admitted and shed p99 at 450-570 ms against 100-200 ms in the others. Here a request
 * is one prepared buffer written, and an answer is read by its status line and Content-Length (or the end of its
 * chunks): the service's answers are small JSON documents.
 */
export async function openLoop({ base, path, headers, rate, connections, seconds, timeoutMs, timeline }) {
  const url = new URL(path, base);
  const lines = Object.entries({ host: url.host, ...headers }).map(([name, value]) => `${name}: ${value}\r\n`);
  const message = Buffer.from(`GET ${url.pathname}${url.search} HTTP/1.1\r\n${lines.join('')}\r\n`, 'latin1');
  const byStatus = new Map();
  const total = Math.round(rate * seconds);
  const sendLag = [];
  const loop = monitorEventLoopDelay({ resolution: 5 });
  let sent = 0;
  let finished = 0;
  let errors = 0;
  let timeouts = 0;
  let start = 0;
  let finish = () => undefined;
  const open = new Set();
  /** Connections with nothing in flight, most recently freed last (as Node's Agent schedules them: LIFO). */
  const idle = [];
  /** Due times of requests waiting for a free connection, oldest first (from `head`). */
  let waiting = [];
  let head = 0;

  const done = () => {
    if (++finished === total) finish();
  };
  const write = (connection, due) => {
    connection.due = due;
    connection.written = performance.now();
    connection.socket.write(message);
  };
  const release = (connection) => {
    if (head < waiting.length) {
      write(connection, waiting[head++]);
      if (head > 4096 && head * 2 > waiting.length) [waiting, head] = [waiting.slice(head), 0];
    } else idle.push(connection);
  };
  const answered = (connection, status, closing) => {
    if (connection.primed) {
      connection.due = -1;
      connection.primed(status);
      connection.primed = null;
      return;
    }
    const now = performance.now();
    let list = byStatus.get(status);
    if (!list) byStatus.set(status, (list = []));
    list.push(now - connection.due);
    timeline?.push([connection.due - start, now - connection.due, status]);
    connection.due = -1;
    done();
    if (!closing) release(connection);
  };
  /** Reads as many whole answers as `connection` holds (one at a time in practice: no pipelining). */
  const read = (connection, chunk) => {
    let buffer = connection.buffer ? Buffer.concat([connection.buffer, chunk]) : chunk;
    for (;;) {
      const headEnd = buffer.indexOf('\r\n\r\n');
      if (headEnd === -1) break;
      const head = buffer.toString('latin1', 0, headEnd).toLowerCase();
      const length = /\r\ncontent-length: *(\d+)/.exec(head);
      let end;
      if (length) end = headEnd + 4 + Number(length[1]);
      else if (head.includes('\r\ntransfer-encoding: chunked')) {
        const last = buffer.indexOf('\r\n0\r\n\r\n', headEnd + 2);
        end = last === -1 ? Infinity : last + 7;
      } else end = headEnd + 4;
      if (buffer.length < end) break;
      buffer = buffer.subarray(end);
      if (connection.due >= 0) answered(connection, Number(head.slice(9, 12)), head.includes('\r\nconnection: close'));
    }
    connection.buffer = buffer.length ? buffer : null;
  };
  const connect = () =>
    new Promise((resolve) => {
      const connection = { socket: createConnection({ host: url.hostname, port: Number(url.port) }) };
      Object.assign(connection, { due: -1, written: 0, buffer: null, timedOut: false, primed: null });
      connection.socket.setNoDelay(true);
      connection.socket.on('data', (chunk) => read(connection, chunk));
      connection.socket.on('error', () => undefined); // counted on 'close', below
      connection.socket.once('connect', () => resolve(connection));
      connection.socket.once('close', () => {
        open.delete(connection);
        const at = idle.indexOf(connection);
        if (at !== -1) idle.splice(at, 1);
        // A priming request is not the run's: its connection closing is neither an error nor an answer.
        if (connection.primed) {
          connection.due = -1;
          connection.primed(0);
          connection.primed = null;
        }
        if (connection.due >= 0) {
          if (connection.timedOut) timeouts++;
          else errors++;
          connection.due = -1;
          done();
        }
        resolve(null);
        // The service closed it (or it timed out): another takes its place while requests are still to come (a moment
        // later, so that a service gone away is not redialled in a tight loop).
        if (start > 0 && sent < total) setTimeout(() => connect().then((fresh) => fresh && release(fresh)), 10);
      });
      open.add(connection);
    });

  // The connections first, as a load balancer's pool holds them, and as autocannon opens its own before it sends:
  // opened while the load runs, 1,000 handshakes in its first second were what the first two seconds measured.
  for (let i = 0; i < connections; i += 100) {
    const batch = await Promise.all(Array.from({ length: Math.min(100, connections - i) }, connect));
    for (const connection of batch) if (connection) idle.push(connection);
  }
  // Each connection then carries one request, a few at a time (not counted), as a pool's connections have. Unprimed,
  // two things in the results were the generator's fresh connections rather than the overload. A connection that never
  // carried a request is, to Node's server, a request whose headers are late: its headers timeout (10 s here) answers
  // it 408 and closes it, and with LIFO reuse most of 1,000 sit unused, so the server's check (every 30 s) closed
  // hundreds at once in the middle of the load, a stall of 100-900 ms in the answers' p99 (Node's checkConnections and
  // onRequestTimeout in the service's profile at that moment). And the load's first 300 ms put a first request on
  // some 500 fresh connections: the service's thread saturated, refusals' p50 50-85 ms, the run's shed p99 64-74 ms;
  // primed, 12-22 ms and 26-27 ms (three runs each).
  const prime = (connection) =>
    new Promise((resolve) => {
      connection.primed = resolve;
      write(connection, performance.now());
    });
  for (let i = 0; i < idle.length; i += PRIME_CONCURRENCY) {
    await Promise.all(idle.slice(i, i + PRIME_CONCURRENCY).map(prime));
  }
  loop.enable();
  start = performance.now();
  return new Promise((resolve) => {
    const sweep = setInterval(() => {
      const now = performance.now();
      for (const connection of open) {
        if (connection.due >= 0 && now - connection.written > timeoutMs) {
          connection.timedOut = true;
          connection.socket.destroy();
        }
      }
    }, 250);
    const tick = setInterval(() => {
      const now = performance.now();
      const due = Math.min(total, Math.floor(((now - start) * rate) / 1000));
      for (; sent < due; sent++) {
        // Each request counts from its own due time, not from this tick's.
        const at = start + (sent * 1000) / rate;
        const connection = idle.pop();
        if (connection) {
          write(connection, at);
          sendLag.push(connection.written - at);
        } else waiting.push(at);
      }
      if (sent >= total) clearInterval(tick);
    }, 1);
    finish = () => {
      const seconds = (performance.now() - start) / 1000;
      loop.disable();
      clearInterval(sweep);
      for (const connection of open) connection.socket.destroy();
      sendLag.sort((a, b) => a - b);
      const ms = (ns) => Math.round(ns / 1e5) / 10;
      resolve({
        byStatus,
        sent,
        errors,
        timeouts,
        seconds,
        sendLagMs: { p50: round1(percentile(sendLag, 50)), p99: round1(percentile(sendLag, 99)) },
        loopDelayMs: { p50: ms(loop.percentile(50)), p99: ms(loop.percentile(99)), max: ms(loop.max) },
      });
    };
  });
}

async function run(options) {
  const instance = autocannon(options);
  const byStatus = new Map();
  instance.on('response', (_client, status, _bytes, ms) => {
    let list = byStatus.get(status);
    if (!list) byStatus.set(status, (list = []));
    list.push(ms);
  });
  const result = await instance;
  return { result, byStatus };
}

/**
 * Runs the scenario against `base` (an instance started for it) and returns its numbers and targets.
 * `headers`: the bench's admin key; `path`: the page read; `measured`: the numbers of an earlier run whose capacity
 * and unloaded p99 this one uses instead of measuring its own.
 */
export async function overload({
  base,
  headers,
  path,
  connections,
  seconds,
  overloadConnections,
  overloadSeconds,
  servicePid,
  warmupSeconds = 0,
  rate,
  factor = 2,
  measured,
}) {
  // The instance is new: its JIT warms up first, unmeasured (capacity measured cold moved by half between runs).
  if (warmupSeconds > 0) await run({ url: base, connections, duration: warmupSeconds, headers, requests: [{ path }] });
  let capacity, unloadedP99, capacityCpu, capacityNon2xx;
  if (measured) {
    // A server that caps what it admits cannot measure its own capacity (the cap's refusals would count): the same
    // handler's, measured uncapped, is given.
    ({
      capacity,
      unloadedP99,
      capacityNon2xx,
      cpu: { capacity: capacityCpu },
    } = measured);
  } else {
    const atCapacity = cpuMark(servicePid);
    const capacityRun = await run({ url: base, connections, duration: seconds, headers, requests: [{ path }] });
    capacityCpu = cpuSince(atCapacity);
    // Served answers only: with ADMISSION=on a refusal in the capacity run would count as capacity.
    const served = [...capacityRun.byStatus]
      .filter(([status]) => status >= 200 && status < 300)
      .flatMap(([, list]) => list)
      .sort((a, b) => a - b);
    capacity = served.length / capacityRun.result.duration;
    capacityNon2xx = capacityRun.result.non2xx;
    unloadedP99 = round1(percentile(served, 99));
  }

  // The liveness prober is a process of its own, as an orchestrator's is: in this one, each probe's time would include
  // the load generator's own event-loop delay (it sends and reads thousands of requests a second).
  let probing = true;
  const prober = startProber(base);
  // What the instance says of itself meanwhile: its /metrics once a second (the admission gauges, the loop's delay).
  const gauges = [];
  const sampler = (async () => {
    while (probing) {
      const next = sleep(1_000);
      const sample = await scrape(base, headers);
      if (sample) gauges.push(sample);
      await next;
    }
  })();
  // Twice the capacity just measured (`factor`: the noisy-neighbour scenario offers half of it too), or a rate given
  // (BENCH_OVERLOAD_RATE: the same load for builds compared).
  const offered = rate ?? Math.round(capacity * factor);
  const atLoad = cpuMark(servicePid);
  const timeline = [];
  const loadRun = await openLoop({
    timeline,
    base,
    path,
    headers,
    rate: offered,
    connections: overloadConnections,
    seconds: overloadSeconds,
    timeoutMs: 10_000,
  });
  const loadCpu = cpuSince(atLoad);
  probing = false;
  const [liveness] = await Promise.all([prober.stop(), sampler]);
  const ready = await probe(base, '/health/ready', 1_000);

  const sorted = (list) => [...list].sort((a, b) => a - b);
  const ok = sorted([...loadRun.byStatus].filter(([s]) => s >= 200 && s < 300).flatMap(([, l]) => l));
  const shed = sorted(loadRun.byStatus.get(503) ?? []);
  const other = [...loadRun.byStatus]
    .filter(([s]) => (s < 200 || s >= 300) && s !== 503)
    .reduce((n, [, l]) => n + l.length, 0);
  const live = sorted(liveness.filter((p) => p.status === 200).map((p) => p.ms));
  const liveFailures = liveness.filter((p) => p.status !== 200).length;
  const numbers = {
    capacity: Math.round(capacity),
    // Answers other than 2xx while capacity was measured (refusals, if the limit was below the connections).
    capacityNon2xx,
    unloadedP99,
    offered,
    offeredActual: Math.round(loadRun.sent / overloadSeconds),
    goodput: Math.round(ok.length / loadRun.seconds),
    goodputRatio: +(ok.length / loadRun.seconds / Math.max(capacity, 1)).toFixed(2),
    answeredOverSeconds: +loadRun.seconds.toFixed(1),
    admittedP50: round1(percentile(ok, 50)),
    admittedP99: round1(percentile(ok, 99)),
    admittedP99Ratio: +(percentile(ok, 99) / Math.max(unloadedP99, 0.1)).toFixed(2),
    shed: shed.length,
    // The share of the answers that were refusals (the noisy-neighbour scenario's target at half capacity: under 1 %).
    shedShare: +(shed.length / Math.max(1, ok.length + shed.length + other)).toFixed(4),
    shedP99: round1(percentile(shed, 99)),
    otherNon2xx: other,
    errors: loadRun.errors + loadRun.timeouts,
    liveProbes: liveness.length,
    liveFailures,
    liveP99: round1(percentile(live, 99)),
    liveMax: round1(live.at(-1) ?? null),
    // Second by second (by when each request was due): answers and p99 of the admitted and of the shed, where in the
    // run the slow ones were (the first seconds, while the limit settles, or throughout).
    perSecond: perSecond(timeline),
    // The generator's own lateness: if it is more than a few ms, the latencies above include the generator's delay.
    generatorSendLagMs: loadRun.sendLagMs,
    generatorLoopDelayMs: loadRun.loopDelayMs,
    readyAfter: ready.status,
    readyAfterMs: round1(ready.ms),
    // Cores used (of the machine's) while capacity was measured and while twice it was offered: by the load generator
    // (this process), the service, and everything else (the database, mostly).
    cpu: { capacity: capacityCpu, overload: loadCpu },
    // Median and highest of the once-a-second samples while twice the capacity was offered.
    gauges: Object.fromEntries(
      Object.keys(SCRAPED).map((name) => {
        const values = sorted(gauges.map((g) => g[name]).filter((v) => v !== undefined));
        return [name, values.length ? { median: percentile(values, 50), max: values.at(-1) } : null];
      }),
    ),
  };
  return numbers;
}

/** [due ms, latency ms, status] answers to per-second counts and p99s of 2xx and 503. */
function perSecond(timeline) {
  const seconds = [];
  for (const [due, ms, status] of timeline) {
    const second = (seconds[Math.floor(due / 1000)] ??= { ok: [], shed: [] });
    if (status >= 200 && status < 300) second.ok.push(ms);
    else if (status === 503) second.shed.push(ms);
  }
  const p99 = (list) =>
    round1(
      percentile(
        list.sort((a, b) => a - b),
        99,
      ),
    );
  return Array.from(seconds, (s = { ok: [], shed: [] }) => ({
    ok: s.ok.length,
    okP99: p99(s.ok),
    shed: s.shed.length,
    shedP99: p99(s.shed),
  }));
}

/** The series of /metrics the scenario samples, by the name it reports them under (the loop's delay in ms). */
const SCRAPED = {
  limit: ['admission_limit', 1],
  inFlight: ['admission_in_flight', 1],
  queued: ['admission_queued', 1],
  loopDelayP99Ms: ['nodejs_eventloop_lag_p99_seconds', 1000],
};

/** One scrape of the instance's /metrics (it takes the admin key): the SCRAPED series, or null if it failed. */
async function scrape(base, headers) {
  try {
    const response = await fetch(`${base}/metrics`, { headers, signal: AbortSignal.timeout(2_000) });
    if (!response.ok) return null;
    const text = await response.text();
    const sample = {};
    for (const [name, [series, scale]] of Object.entries(SCRAPED)) {
      const line = new RegExp(`^${series} ([\\d.e+-]+)$`, 'm').exec(text);
      if (line) sample[name] = Math.round(Number(line[1]) * scale * 10) / 10;
    }
    return sample;
  } catch {
    return null;
  }
}

/** The CPU time so far: this process's (µs), the service's and the whole machine's busy time (clock ticks). */
function cpuMark(servicePid) {
  return {
    at: performance.now(),
    own: process.cpuUsage(),
    pid: servicePid,
    service: processTicks(servicePid),
    serviceSystem: processTicks(servicePid, 'system'),
    machine: machineTicks(),
  };
}

/** Cores used since `mark`, each to two decimals (null where /proc is not there to tell). */
function cpuSince(mark) {
  const seconds = (performance.now() - mark.at) / 1000;
  const own = process.cpuUsage(mark.own);
  const cores = (ticks) => (ticks === null ? null : +(ticks / TICKS_PER_SECOND / seconds).toFixed(2));
  const generator = +((own.user + own.system) / 1e6 / seconds).toFixed(2);
  const now = processTicks(mark.pid);
  const service = mark.service === null || now === null ? null : cores(now - mark.service);
  const system = processTicks(mark.pid, 'system');
  // The service's time in the kernel (its system calls: the sockets' reads and writes, on loopback the peer's TCP
  // receive work too), a part of `service`.
  const serviceSystem = mark.serviceSystem === null || system === null ? null : cores(system - mark.serviceSystem);
  const machine = mark.machine === null ? null : cores(machineTicks() - mark.machine);
  return {
    generator,
    service,
    serviceSystem,
    rest: machine === null || service === null ? null : +(machine - generator - service).toFixed(2),
  };
}

/** The CPUs a process may run on, as taskset lists them (`0,1` or `0-3`), or null where taskset cannot tell. */
function affinity(pid) {
  try {
    return /: *([\d,-]+)\s*$/.exec(execFileSync('taskset', ['-c', '-p', String(pid)], { encoding: 'utf8' }))[1];
  } catch {
    return null;
  }
}

const expand = (list) =>
  list.split(',').flatMap((part) => {
    const [from, to = from] = part.split('-').map(Number);
    return Array.from({ length: to - from + 1 }, (_, i) => from + i);
  });

/**
 * Puts this process (the load generator) on the first CPU it may use and the service (every thread of it) on the
 * last, leaving the database free to run on all: the generator's work then never competes with the service's
 * thread, as when the clients are other machines. Returns the cores and `undo` (this process back on all its CPUs),
 * or null with fewer than 2 CPUs or no taskset (util-linux): the scenario then runs unpinned and says so.
 */
export function pinCores(servicePid) {
  const own = affinity(process.pid);
  const cpus = own ? expand(own) : [];
  if (cpus.length < 2) return null;
  const generator = cpus[0];
  const service = cpus[cpus.length - 1];
  try {
    execFileSync('taskset', ['-a', '-c', '-p', String(service), String(servicePid)], { stdio: 'ignore' });
    execFileSync('taskset', ['-a', '-c', '-p', String(generator), String(process.pid)], { stdio: 'ignore' });
  } catch {
    return null;
  }
  return {
    cores: { generator, service },
    undo: () => {
      try {
        execFileSync('taskset', ['-a', '-c', '-p', own, String(process.pid)], { stdio: 'ignore' });
      } catch {
        // nothing to undo: this process ends soon after, and the servers it started are stopped
      }
    },
  };
}

/**
 * A noisy neighbour: a process spinning a busy loop on `core` (taskset), as another tenant's work on the service's
 * core, a CPU quota or a VM's steal would take it (issue 48). Returns `stop`, or null where taskset cannot pin it.
 */
export function startNoise(core) {
  const child = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
  try {
    execFileSync('taskset', ['-a', '-c', '-p', String(core), String(child.pid)], { stdio: 'ignore' });
  } catch {
    child.kill('SIGKILL');
    return null;
  }
  return {
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGKILL');
      }),
  };
}

/** Linux's USER_HZ (100 on every common build; /proc reports in it). */
export const TICKS_PER_SECOND = 100;

/** A process's CPU time so far (clock ticks): user and system, or system alone (`part`). */
export function processTicks(pid, part = 'all') {
  if (!pid) return null;
  try {
    // utime and stime: fields 14 and 15, counted after the command name's closing parenthesis.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return part === 'system' ? Number(fields[12]) : Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

export function machineTicks() {
  try {
    const [, ...times] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
    // user nice system idle iowait irq softirq steal: busy is all but idle and iowait.
    return times.slice(0, 8).reduce((sum, t, i) => (i === 3 || i === 4 ? sum : sum + t), 0);
  } catch {
    return null;
  }
}

/** The targets of issue 48 for one overload result (admission on, the defaults). */
export function overloadTargets(n) {
  return [
    { target: 'overload: goodput ≥ 0.8 of capacity', met: n.goodputRatio >= 0.8, measured: n.goodputRatio },
    {
      target: 'overload: admitted p99 ≤ 3× the unloaded p99',
      met: n.admittedP99Ratio <= 3,
      measured: `${n.admittedP99} ms, ${n.admittedP99Ratio}× ${n.unloadedP99} ms`,
    },
    {
      target: 'overload: shed answers p99 ≤ 50 ms',
      met: n.shed === 0 ? null : n.shedP99 <= 50,
      measured: n.shed === 0 ? 'nothing shed' : `${n.shedP99} ms over ${n.shed}`,
    },
    {
      target: 'overload: /health/live p99 ≤ 100 ms, every probe answered',
      met: n.liveFailures === 0 && n.liveP99 !== null && n.liveP99 <= 100,
      measured: `${n.liveP99} ms (max ${n.liveMax}), ${n.liveFailures} of ${n.liveProbes} failed`,
    },
    {
      target: 'overload: ready right after',
      met: n.readyAfter === 200,
      measured: `${n.readyAfter} in ${n.readyAfterMs} ms`,
    },
  ];
}
