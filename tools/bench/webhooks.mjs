// The webhooks scenario of `npm run bench` (issue 49, item 2): how many deliveries a second one worker process makes,
// and how late deliveries arrive at a steady rate, with and without a few slow or failing endpoints among the others.
//
// Set-up, once: BENCH_WEBHOOK_ENDPOINTS (1,000) endpoints subscribed to `pet.updated`, each a URL of its own
// (`/hook/<n>`) on a receiver process (tools/bench/webhook-receiver.mjs, so that receiving costs neither the bench's
// process nor the service's), made through the API as customers make them: an account has at most 10 endpoints, so
// 100 accounts (POST /accounts), 10 endpoints each (POST /webhooks/endpoints with the account's key). One catalogue
// change, an administrator's PATCH of a pet's name, is one event fanned out to every endpoint.
//
// The service: one instance serving HTTP only (MESSAGE_WORKER=false: it records each event and its fan-out job) and
// BENCH_WEBHOOK_WORKERS (1) worker processes (`main.js --worker-only`, as `npm run worker`), so that what is measured
// is per worker process; all with WEBHOOKS_ALLOW_PRIVATE=true (the receiver is on 127.0.0.1), no rate limit, the
// bench's admin key, and every WEBHOOK_* / WEBHOOKS_* variable of the bench's environment (WEBHOOK_WORKER_CONCURRENCY,
// WEBHOOK_ENDPOINT_CONCURRENCY, WEBHOOK_DELIVERIES_PER_MINUTE, …), which the report lists.
//
// Each run (BENCH_WEBHOOK_RUNS, 3) starts its worker processes afresh, warms them on one change (not measured), then:
// 1. throughput: BENCH_WEBHOOK_CHANGES (20) changes at once (20,000 deliveries): deliveries per second from the first
//    change sent to the last delivery received, per worker process, and the cores each process used meanwhile;
// 2. steady: a change every ENDPOINTS / BENCH_WEBHOOK_RATE seconds (200 deliveries a second: one every 5 s) for
//    BENCH_WEBHOOK_SECONDS (30): each delivery's lag, from when the bench sent the change to when the receiver had the
//    request, p50/p99/max;
// 3. isolation: the same load with BENCH_WEBHOOK_SLOW (10) endpoints answering after BENCH_WEBHOOK_SLOW_SECONDS (5),
//    then the same with them answering 500: the other endpoints' lag, and theirs (a failing one's first attempt).
// BENCH_WEBHOOK_TOP_SQL=1 prints, after each phase, the statements that took the most of PostgreSQL's time in it.
// A phase waits for its deliveries at most BENCH_WEBHOOK_WAIT_SECONDS (60) after its last change: one not received by
// then counts as later than that (a percentile among them prints as "> 60 s"), and the bench's deliveries still
// pending are then given up (SQL: marked failed, their pg-boss jobs deleted) so that the next phase starts on an empty
// queue. The accounts (with their endpoints and deliveries) are deleted at the end; any an interrupted run left, at the
// start. Every wait is bounded; the processes are stopped by run.mjs's start/stopChild (on failure and SIGINT too).
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { machineTicks, processTicks, TICKS_PER_SECOND } from './overload.mjs';

/** The name every bench account of this scenario starts with: how an interrupted run's are found and deleted. */
const ACCOUNT_PREFIX = 'Bench webhooks ';
/** The most endpoints an account may have (409 too_many_endpoints beyond). */
const ENDPOINTS_PER_ACCOUNT = 10;
const EVENT = 'pet.updated';
/** Accounts set up at a time. */
const SETUP_CONCURRENCY = 8;
const REQUEST_TIMEOUT_MS = 30_000;
const POLL_MS = 100;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** Milliseconds since the epoch, to the microsecond (the receiver stamps arrivals the same way, on the same clock). */
const now = () => performance.timeOrigin + performance.now();
const round1 = (n) => (n === null || n === undefined ? null : Math.round(n * 10) / 10);

/** The scenario's settings (BENCH_WEBHOOK_*), checked: run.mjs reads them at start, before anything runs. */
export function webhookSettings(env = process.env) {
  const whole = (name, fallback, min) => {
    const value = Number(env[name] ?? fallback);
    if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be a whole number, ${min} or more`);
    return value;
  };
  const settings = {
    runs: whole('BENCH_WEBHOOK_RUNS', 3, 1),
    endpoints: whole('BENCH_WEBHOOK_ENDPOINTS', 1000, 1),
    workers: whole('BENCH_WEBHOOK_WORKERS', 1, 1),
    changes: whole('BENCH_WEBHOOK_CHANGES', 20, 1),
    rate: whole('BENCH_WEBHOOK_RATE', 200, 1),
    seconds: whole('BENCH_WEBHOOK_SECONDS', 30, 1),
    slow: whole('BENCH_WEBHOOK_SLOW', 10, 0),
    slowSeconds: whole('BENCH_WEBHOOK_SLOW_SECONDS', 5, 0),
    waitSeconds: whole('BENCH_WEBHOOK_WAIT_SECONDS', 60, 1),
  };
  if (settings.slow >= settings.endpoints) throw new Error('BENCH_WEBHOOK_SLOW must be below BENCH_WEBHOOK_ENDPOINTS');
  return settings;
}

/** The WEBHOOK_* and WEBHOOKS_* variables of the bench's environment: given to every process of the scenario. */
export function webhookEnvironment(env = process.env) {
  return Object.fromEntries(Object.entries(env).filter(([name]) => /^WEBHOOKS?_/.test(name)));
}

/** Seconds between two changes in the steady phases, and how many changes they make. */
function steadyPlan(settings) {
  const intervalMs = (settings.endpoints / settings.rate) * 1000;
  return { intervalMs, count: Math.max(1, Math.round((settings.seconds * 1000) / intervalMs)) };
}

async function api(base, method, path, body, key, expected) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  if (response.status !== expected) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
  return JSON.parse(text);
}

/** The receiver's control paths. */
function receiverClient(base) {
  const call = async (path, init) => {
    const response = await fetch(`${base}${path}`, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    if (!response.ok) throw new Error(`the webhook receiver answered ${response.status} to ${path}`);
    return response.json();
  };
  return {
    records: (from) => call(`/control/records?from=${from}`),
    modes: (modes) =>
      call('/control/modes', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(modes),
      }),
  };
}

/**
 * What the receiver recorded, read a little at a time: each record goes to the phase under way when it matches one of
 * its changes (by the pet's name), the first per endpoint and change as the delivery's arrival, the next as a repeat
 * (a retry of a failing endpoint, or a duplicate); the others (an earlier phase's) are counted as strays.
 */
class Tracker {
  constructor(receiver) {
    this.receiver = receiver;
    this.cursor = 0;
    this.inFlight = 0;
    this.current = null;
    this.strays = 0;
    this.polling = null;
  }

  /** Reads the records since the last poll (one poll at a time: a caller arriving meanwhile shares it). */
  poll() {
    this.polling ??= (async () => {
      try {
        const body = await this.receiver.records(this.cursor);
        this.cursor += body.records.length;
        this.inFlight = body.inFlight;
        for (const [n, arrival, name, eventTime, , status] of body.records) {
          const phase = this.current;
          if (!phase?.changes.has(name)) {
            this.strays++;
            continue;
          }
          const key = `${n} ${name}`;
          if (phase.arrivals.has(key)) phase.repeats++;
          else phase.arrivals.set(key, { n, arrival, eventTime, status });
        }
      } finally {
        this.polling = null;
      }
    })();
    return this.polling;
  }
}

/** CPU ticks so far of each process, this one's CPU time, and the machine's busy ticks. */
function cpuMark(pids) {
  return {
    at: now(),
    own: process.cpuUsage(),
    machine: machineTicks(),
    ticks: Object.fromEntries(Object.entries(pids).map(([role, list]) => [role, list.map((p) => processTicks(p))])),
    pids,
  };
}

/**
 * Cores used since `mark` by each role's processes (`workers`, `http`, `receiver`), by the bench, and by the rest of
 * the machine (the database, mostly); the workers' CPU time in ms. null where /proc cannot tell.
 */
function cpuSince(mark) {
  const seconds = (now() - mark.at) / 1000;
  const cores = (ticks) => (ticks === null ? null : +(ticks / TICKS_PER_SECOND / seconds).toFixed(2));
  const used = {};
  for (const [role, list] of Object.entries(mark.pids)) {
    const deltas = list.map((pid, i) => {
      const after = processTicks(pid);
      return after === null || mark.ticks[role][i] === null ? null : after - mark.ticks[role][i];
    });
    used[role] = deltas.includes(null) ? null : deltas.reduce((a, b) => a + b, 0);
  }
  const own = process.cpuUsage(mark.own);
  const bench = +((own.user + own.system) / 1e6 / seconds).toFixed(2);
  const machine = mark.machine === null ? null : machineTicks() - mark.machine;
  const known = Object.values(used);
  return {
    ...Object.fromEntries(Object.entries(used).map(([role, ticks]) => [role, cores(ticks)])),
    bench,
    rest:
      machine === null || known.includes(null)
        ? null
        : +(cores(machine) - bench - known.reduce((a, t) => a + cores(t), 0)).toFixed(2),
    workersCpuMs: used.workers === null ? null : (used.workers * 1000) / TICKS_PER_SECOND,
  };
}

/** One change: the pet renamed to `name` (an administrator's PATCH), its time the moment the request is sent. */
async function change(ctx, phase, name, petId) {
  const entry = { sentAt: now(), answeredAt: null };
  phase.changes.set(name, entry);
  const response = await fetch(`${ctx.base}/pets/${petId}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${ctx.adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  entry.answeredAt = now();
  if (!response.ok) throw new Error(`PATCH /pets/${petId} answered ${response.status}: ${text}`);
}

/**
 * One phase: `count` changes, `intervalMs` apart (0: all at once), then the wait for every endpoint's delivery of
 * each, bounded by the wait setting after the last change was answered. Returns the phase (its changes and arrivals),
 * whether every delivery came, and the CPU used from the first change to the end of the wait.
 */
async function runPhase(ctx, label, { count, intervalMs }) {
  const { tracker, settings, endpoints } = ctx;
  const phase = { label, changes: new Map(), arrivals: new Map(), repeats: 0 };
  tracker.current = phase;
  const statementsBefore = await ctx.statementCount();
  const timesBefore = process.env.BENCH_WEBHOOK_TOP_SQL ? await ctx.statementTimes() : null;
  const cpu = cpuMark(ctx.pids());
  let sending = true;
  // The receiver's records are read while the changes go out, so that each read stays small.
  let readError = null;
  const reading = (async () => {
    while (sending) {
      await tracker.poll();
      await sleep(POLL_MS);
    }
  })().catch((error) => (readError = error));
  const start = now();
  const sends = [];
  // Each change's failure is kept (a rejection left unhandled while the next ones wait their turn would end the bench).
  const failures = [];
  try {
    for (let i = 0; i < count && failures.length === 0; i++) {
      const wait = start + i * intervalMs - now();
      if (wait > 0) await sleep(wait);
      const petId = ctx.pets[ctx.nextPet++ % ctx.pets.length];
      sends.push(change(ctx, phase, `${ctx.tag} ${label} ${i + 1}`, petId).catch((error) => failures.push(error)));
    }
    await Promise.all(sends);
  } finally {
    sending = false;
    await reading;
  }
  if (failures.length || readError) throw failures[0] ?? readError;
  const expected = count * endpoints.length;
  const deadline = now() + settings.waitSeconds * 1000;
  while (phase.arrivals.size < expected && now() < deadline) {
    await sleep(POLL_MS);
    await tracker.poll();
  }
  const used = cpuSince(cpu);
  const statementsAfter = await ctx.statementCount();
  if (timesBefore) {
    // BENCH_WEBHOOK_TOP_SQL=1: where the database's time went in this phase (printed, not in the report).
    console.log(`  ${label}: the statements that took the most of the database's time`);
    for (const row of ctx.topStatements(timesBefore, await ctx.statementTimes())) {
      console.log(`    ${String(row.ms).padStart(6)} ms ${String(row.calls).padStart(7)} calls  ${row.query}`);
    }
  }
  tracker.current = null;
  return {
    phase,
    expected,
    complete: phase.arrivals.size >= expected,
    cpu: used,
    // Less the bench's own counting statement; everything the service sent meanwhile (pg-boss's polling included).
    statements: statementsBefore === null || statementsAfter === null ? null : statementsAfter - statementsBefore - 1,
  };
}

/** The lag of each delivery to `numbers` (endpoint numbers) of the phase's changes: p50, p99, max (ms). */
function lagOf(phase, numbers, waitSeconds) {
  const lags = [];
  const fromEvent = [];
  let missing = 0;
  for (const [name, change] of phase.changes) {
    for (const n of numbers) {
      const arrival = phase.arrivals.get(`${n} ${name}`);
      if (!arrival) {
        missing++;
        continue;
      }
      lags.push(arrival.arrival - change.sentAt);
      if (Number.isFinite(arrival.eventTime)) fromEvent.push(arrival.arrival - arrival.eventTime);
    }
  }
  lags.sort((a, b) => a - b);
  fromEvent.sort((a, b) => a - b);
  const total = lags.length + missing;
  // A delivery not received within the wait is later than any received: a percentile that falls among those is null
  // (printed "> wait").
  const at = (p, list = lags) => {
    const rank = Math.max(0, Math.ceil((p / 100) * total) - 1);
    return rank < list.length ? round1(list[rank]) : null;
  };
  return {
    deliveries: total,
    missing,
    p50: at(50),
    p99: at(99),
    max: missing ? null : round1(lags.at(-1) ?? null),
    waitSeconds,
    // The same from the event's `timestamp` (taken by the service inside the change's transaction).
    fromEventP50: at(50, fromEvent),
    fromEventP99: at(99, fromEvent),
  };
}

/**
 * The bench's deliveries still pending given up: marked failed (as the service gives one up) and their pg-boss jobs
 * deleted, so that the next phase starts on an empty queue (the worker's queue is pg-boss's `webhook-delivery`).
 */
async function giveUpPending(db, endpointIds) {
  const { rows } = await db.query(
    `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, last_error = 'given_up'
      WHERE status = 'pending' AND endpoint_id = ANY($1::bigint[]) RETURNING id`,
    [endpointIds],
  );
  const ids = rows.map((r) => Number(r.id));
  let jobs = 0;
  if (ids.length) {
    try {
      jobs = (
        await db.query(
          `DELETE FROM pgboss.job WHERE name = 'webhook-delivery' AND state IN ('created', 'retry')
              AND (data->>'deliveryId')::bigint = ANY($1::bigint[])`,
          [ids],
        )
      ).rowCount;
    } catch (error) {
      // No pg-boss queue of that name (a worker that queues otherwise): the deliveries marked failed are enough.
      console.log(`  (pg-boss jobs of the given-up deliveries not deleted: ${error.message})`);
    }
  }
  return { deliveries: ids.length, jobs };
}

/**
 * Until the receiver has had nothing for a second with nothing in flight (a slow endpoint's answers, a worker's last
 * attempts), at most `limitMs`: the next phase then starts quiet.
 */
async function settle(tracker, limitMs) {
  const deadline = now() + limitMs;
  let seen = tracker.cursor;
  let quietSince = now();
  while (now() < deadline) {
    await tracker.poll();
    if (tracker.cursor !== seen) {
      seen = tracker.cursor;
      quietSince = now();
    } else if (tracker.inFlight === 0 && now() - quietSince >= 1_000) return true;
    await sleep(POLL_MS);
  }
  return false;
}

/** This scenario's accounts (an interrupted run's too) deleted, with their keys, endpoints and deliveries. */
async function removeBenchAccounts(db) {
  const { rows } = await db.query(
    `SELECT a.id, coalesce(array_agg(e.id) FILTER (WHERE e.id IS NOT NULL), '{}') AS endpoints
       FROM accounts a LEFT JOIN webhook_endpoints e ON e.owner_id = a.id
      WHERE a.role = 'customer' AND a.name LIKE $1 GROUP BY a.id`,
    [`${ACCOUNT_PREFIX}%`],
  );
  if (rows.length === 0) return 0;
  const owners = rows.map((r) => Number(r.id));
  await giveUpPending(
    db,
    rows.flatMap((r) => r.endpoints.map(Number)),
  );
  await db.query('DELETE FROM webhook_outbound_budgets WHERE owner_id = ANY($1::bigint[])', [owners]);
  await db.query('DELETE FROM accounts WHERE id = ANY($1::bigint[])', [owners]);
  return owners.length;
}

/** ENDPOINTS endpoints on the receiver, 10 per account, through the API; their ids by endpoint number. */
async function createEndpoints(base, receiverBase, count, tag) {
  const accounts = Math.ceil(count / ENDPOINTS_PER_ACCOUNT);
  const endpoints = new Array(count);
  let next = 0;
  const setUp = async () => {
    while (next < accounts) {
      const a = next++;
      const signup = await api(base, 'POST', '/accounts', { name: `${ACCOUNT_PREFIX}${tag} ${a + 1}` }, null, 201);
      for (let n = a * ENDPOINTS_PER_ACCOUNT; n < Math.min(count, (a + 1) * ENDPOINTS_PER_ACCOUNT); n++) {
        const body = { url: `${receiverBase}/hook/${n}`, events: [EVENT] };
        const endpoint = await api(base, 'POST', '/webhooks/endpoints', body, signup.apiKey.key, 201);
        endpoints[n] = { n, id: Number(endpoint.id), accountId: Number(signup.account.id) };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(SETUP_CONCURRENCY, accounts) }, setUp));
  return endpoints;
}

/** Sums of some series of a worker's /metrics (METRICS_PORT), or null where it did not answer. */
async function workerCounters(url) {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    const text = await response.text();
    const sum = (series) =>
      text
        .split('\n')
        .filter((line) => line.startsWith(`${series} `) || line.startsWith(`${series}{`))
        .reduce((total, line) => total + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
    return {
      deferred: sum('webhook_deliveries_deferred_total'),
      failedAttempts: sum('webhook_delivery_failures_total'),
    };
  } catch {
    return null;
  }
}

/** One run: fresh worker processes, a warm-up change, then the three phases. */
async function oneRun(ctx, run) {
  const { settings, endpoints, tracker, receiver } = ctx;
  const workers = [];
  const ids = endpoints.map((e) => e.id);
  const numbers = endpoints.map((e) => e.n);
  ctx.pids = () => ({ workers: workers.map((w) => w.child.pid), http: [ctx.http.pid], receiver: [ctx.receiverPid] });
  const steady = steadyPlan(settings);
  const result = { run, givenUp: 0 };
  const afterPhase = async (done) => {
    // What the phase did not receive within its wait is given up, then the receiver left to go quiet.
    if (!done.complete) result.givenUp += (await giveUpPending(ctx.db, ids)).deliveries;
    await settle(tracker, (settings.slowSeconds + 10) * 1000);
  };
  try {
    for (let i = 0; i < settings.workers; i++) {
      const metricsPort = await ctx.freePort();
      const name = `webhooks-worker-run${run}${settings.workers > 1 ? `-${i + 1}` : ''}`;
      const child = ctx.startService(name, await ctx.freePort(), { METRICS_PORT: String(metricsPort) }, [
        '--worker-only',
      ]);
      workers.push({ child, metrics: `http://127.0.0.1:${metricsPort}/metrics` });
    }
    for (const w of workers) {
      await ctx.waitUntil('a webhook worker (--worker-only)', w.child, () => fetch(w.metrics).then((r) => r.ok));
    }
    // Warm-up: one change to every endpoint, not measured (the processes' JIT, the receiver's connections).
    await afterPhase(await runPhase(ctx, `r${run} warm-up`, { count: 1, intervalMs: 0 }));

    const burst = await runPhase(ctx, `r${run} burst`, { count: settings.changes, intervalMs: 0 });
    const arrivals = [...burst.phase.arrivals.values()];
    let first = Infinity;
    for (const c of burst.phase.changes.values()) first = Math.min(first, c.sentAt);
    let [earliest, last] = [Infinity, first];
    for (const a of arrivals) [earliest, last] = [Math.min(earliest, a.arrival), Math.max(last, a.arrival)];
    const seconds = Math.max(last - first, 1) / 1000;
    result.throughput = {
      changes: settings.changes,
      expected: burst.expected,
      delivered: arrivals.length,
      complete: burst.complete,
      seconds: +seconds.toFixed(2),
      perSecond: Math.round(arrivals.length / seconds),
      perWorker: Math.round(arrivals.length / seconds / settings.workers),
      firstAfterMs: arrivals.length ? round1(earliest - first) : null,
      repeats: burst.phase.repeats,
      cpu: burst.cpu,
      workerCpuMsPerDelivery:
        burst.cpu.workersCpuMs === null || !arrivals.length
          ? null
          : +(burst.cpu.workersCpuMs / arrivals.length).toFixed(2),
      statementsPerDelivery:
        burst.statements === null || !arrivals.length ? null : +(burst.statements / arrivals.length).toFixed(1),
    };
    await afterPhase(burst);

    const steadyRun = await runPhase(ctx, `r${run} steady`, steady);
    result.steady = {
      changes: steady.count,
      intervalSeconds: +(steady.intervalMs / 1000).toFixed(2),
      lag: lagOf(steadyRun.phase, numbers, settings.waitSeconds),
      repeats: steadyRun.phase.repeats,
      cpu: steadyRun.cpu,
    };
    await afterPhase(steadyRun);

    if (settings.slow > 0) {
      // Spread over the accounts (with 1,000 endpoints: 0, 100, 200, …: ten customers with one bad endpoint each).
      const bad = Array.from({ length: settings.slow }, (_, i) => Math.floor((i * settings.endpoints) / settings.slow));
      const good = numbers.filter((n) => !bad.includes(n));
      for (const mode of ['slow', 'failing']) {
        await receiver.modes(
          mode === 'slow' ? { slow: bad, slowMs: settings.slowSeconds * 1000 } : { fail: bad, slowMs: 0 },
        );
        try {
          const isolated = await runPhase(ctx, `r${run} ${mode}`, steady);
          result[mode] = {
            endpoints: bad.length,
            others: lagOf(isolated.phase, good, settings.waitSeconds),
            [mode]: lagOf(isolated.phase, bad, settings.waitSeconds),
            repeats: isolated.phase.repeats,
          };
          // A failing endpoint's deliveries stay pending for their retries: given up, whatever the others did.
          if (mode === 'failing') result.givenUp += (await giveUpPending(ctx.db, ids)).deliveries;
          await afterPhase(isolated);
        } finally {
          await receiver.modes({});
        }
      }
    }
    const counters = await Promise.all(workers.map((w) => workerCounters(w.metrics)));
    result.workerCounters = counters.every(Boolean)
      ? {
          deferred: counters.reduce((a, c) => a + c.deferred, 0),
          failedAttempts: counters.reduce((a, c) => a + c.failedAttempts, 0),
        }
      : null;
  } finally {
    for (const w of workers) await ctx.stopChild(w.child);
    result.givenUp += (await giveUpPending(ctx.db, ids)).deliveries;
  }
  return result;
}

/** A lag in ms or s; null: not received within the wait. */
const duration = (value, waitSeconds) =>
  value === null ? `> ${waitSeconds} s` : value < 1_000 ? `${Math.round(value)} ms` : `${(value / 1000).toFixed(1)} s`;
/** `p50 / p99 / max` of a lag, with what was missing. */
export const lagText = (lag) =>
  [lag.p50, lag.p99, lag.max].map((v) => duration(v, lag.waitSeconds)).join(' / ') +
  (lag.missing ? ` (${lag.missing} of ${lag.deliveries} not received in ${lag.waitSeconds} s)` : '');
const coresText = (c) =>
  `workers ${c.workers ?? '–'} / http ${c.http ?? '–'} / receiver ${c.receiver ?? '–'} / bench ${c.bench} / ` +
  `rest ${c.rest ?? '–'}`;

/** One run's lines for the console. */
export function runText(r) {
  const t = r.throughput;
  const lines = [
    `  run ${r.run}: ${t.delivered} of ${t.expected} deliveries of ${t.changes} changes at once in ${t.seconds} s: ` +
      `${t.perSecond}/s, ${t.perWorker}/s per worker process` +
      `${t.complete ? '' : ' (not all received: the wait ended)'}; first after ${t.firstAfterMs} ms; ` +
      `cores ${coresText(t.cpu)}; worker CPU ${t.workerCpuMsPerDelivery ?? '–'} ms and ` +
      `${t.statementsPerDelivery ?? '–'} SQL statements per delivery`,
    `    steady (a change every ${r.steady.intervalSeconds} s, ${r.steady.changes} changes): lag p50/p99/max ` +
      lagText(r.steady.lag),
  ];
  for (const mode of ['slow', 'failing']) {
    if (!r[mode]) continue;
    lines.push(
      `    ${r[mode].endpoints} endpoints ${mode === 'slow' ? 'slow' : 'failing (500)'}: the others' lag ` +
        `${lagText(r[mode].others)}; theirs ${lagText(r[mode][mode])}`,
    );
  }
  if (r.givenUp || r.workerCounters?.deferred) {
    lines.push(
      `    given up by the bench (not received in time, or failing): ${r.givenUp}; deferred by the outbound budget: ` +
        `${r.workerCounters?.deferred ?? '?'}`,
    );
  }
  return lines.join('\n');
}

/** min–max of a field over the runs (null values, "beyond the wait", shown as such). */
function range(runs, pick, show) {
  const values = runs.map(pick).filter((v) => v !== undefined);
  if (values.length === 0) return '–';
  if (values.includes(null)) return values.map(show).join(', ');
  const [lo, hi] = [Math.min(...values), Math.max(...values)];
  return lo === hi ? show(lo) : `${show(lo)}–${show(hi)}`;
}

/** The spread of the runs, one line. */
export function spreadText(w) {
  const { runs, settings } = w;
  const lag = (v) => duration(v, settings.waitSeconds);
  return (
    `  over ${runs.length} runs: ${range(
      runs,
      (r) => r.throughput.perWorker,
      (v) => `${v}/s`,
    )} ` +
    `deliveries per worker process; steady lag p50 ${range(runs, (r) => r.steady.lag.p50, lag)}, ` +
    `p99 ${range(runs, (r) => r.steady.lag.p99, lag)}` +
    (runs[0].slow
      ? `; the others' p99 with slow endpoints ${range(runs, (r) => r.slow.others.p99, lag)}, ` +
        `with failing ones ${range(runs, (r) => r.failing.others.p99, lag)}`
      : '')
  );
}

/** Issue 49's targets, each judged over every run (met only if met in each). */
export function webhookTargets(w) {
  if (!w?.runs?.length) return [];
  const { settings } = w;
  const each = (pick, ok, text) => {
    const values = w.runs.map(pick);
    return {
      met: values.some((v) => v === undefined) ? null : values.every(ok),
      measured: values.map((v) => (v === undefined ? 'not measured' : text(v))).join(' / '),
    };
  };
  const p99 = (lag) => duration(lag.p99, lag.waitSeconds);
  const within = (lag) => lag.p99 !== null && lag.p99 <= 1_000;
  const bad = `${settings.slow} of ${settings.endpoints} endpoints`;
  return [
    {
      target: `webhooks: ≥ 1,000 deliveries/s per worker process to fast receivers`,
      ...each(
        (r) => r.throughput,
        (t) => t.complete && t.perWorker >= 1_000,
        (t) => `${t.perWorker}/s${t.complete ? '' : ' (incomplete)'}`,
      ),
    },
    {
      target: `webhooks: lag p99 ≤ 1 s at a steady ${settings.rate} deliveries/s`,
      ...each((r) => r.steady.lag, within, p99),
    },
    ...(settings.slow > 0
      ? [
          {
            target: `webhooks: ${bad} answering after ${settings.slowSeconds} s, the others' lag p99 ≤ 1 s`,
            ...each((r) => r.slow?.others, within, p99),
          },
          {
            target: `webhooks: ${bad} failing (500), the others' lag p99 ≤ 1 s`,
            ...each((r) => r.failing?.others, within, p99),
          },
        ]
      : []),
  ];
}

/** The report's section (markdown lines). */
export function webhookMarkdown(w) {
  const s = w.settings;
  const lag = (l) => (l ? lagText(l) : '–');
  return [
    '',
    '## Webhooks (deliveries to local receivers; issue 49)',
    '',
    `${s.endpoints} endpoints (${w.accounts} accounts, made through the API in ${w.setupSeconds} s) subscribed to ` +
      `\`${EVENT}\` on a receiver process at 127.0.0.1; one HTTP-only instance and ${s.workers} worker ` +
      `process(es) (\`--worker-only\`), fresh for each of ${s.runs} run(s); settings given to the service: ` +
      `${Object.entries(w.environment)
        .map(([k, v]) => `\`${k}=${v}\``)
        .join(', ')}. ` +
      `Throughput: ${s.changes} changes at once, from the first sent to the last delivery received. Steady: a change ` +
      `every ${(s.endpoints / s.rate).toFixed(2)} s (${s.rate} deliveries/s) for ${s.seconds} s; lag from the ` +
      `change sent to the request received, p50/p99/max. Isolation: the same with ${s.slow} endpoints answering ` +
      `after ${s.slowSeconds} s, then answering 500 (their first attempt). A phase waits ${s.waitSeconds} s at most ` +
      'after its last change; what did not arrive by then is later than that ("> wait") and is given up.',
    '',
    '| run | deliveries/s (per worker) | received | cores: workers / http / receiver / bench / rest | ' +
      'worker CPU ms, SQL per delivery | steady lag | slow: others / slow ones | failing: others / failing ones |',
    '|---|---|---|---|---|---|---|---|',
    ...w.runs.map((r) => {
      const t = r.throughput;
      return (
        `| ${r.run} | ${t.perSecond} (${t.perWorker}) | ${t.delivered} of ${t.expected} in ${t.seconds} s | ` +
        `${coresText(t.cpu)} | ${t.workerCpuMsPerDelivery ?? '–'}, ${t.statementsPerDelivery ?? '–'} | ` +
        `${lag(r.steady.lag)} | ${lag(r.slow?.others)} / ${lag(r.slow?.slow)} | ` +
        `${lag(r.failing?.others)} / ${lag(r.failing?.failing)} |`
      );
    }),
    '',
    spreadText(w).trim(),
  ];
}

/**
 * The scenario. `startService(name, port, env, args)` starts the built service as run.mjs does (Node 22, npm start's
 * flags, the admin key, no rate limit); `startChild(name, args, env)` a script on the same Node; both register the
 * process for run.mjs's cleanup. `statementCount()` is the database's statement count (null without
 * pg_stat_statements).
 */
export async function webhooksScenario({
  settings,
  db,
  adminKey,
  startService,
  startChild,
  stopChild,
  freePort,
  waitUntil,
  statementCount,
  statementTimes,
  topStatements,
}) {
  const leftover = await removeBenchAccounts(db);
  if (leftover) console.log(`  removed ${leftover} accounts an earlier, interrupted run of this scenario left`);
  const environment = { ...webhookEnvironment(), WEBHOOKS_ALLOW_PRIVATE: 'true' };
  const receiverPort = await freePort();
  const receiverChild = startChild('webhook-receiver', ['tools/bench/webhook-receiver.mjs'], {
    RECEIVER_PORT: String(receiverPort),
  });
  const receiverBase = `http://127.0.0.1:${receiverPort}`;
  const receiver = receiverClient(receiverBase);
  let http = null;
  try {
    await waitUntil('the webhook receiver', receiverChild, () => receiver.records(0).then(() => true));
    const httpPort = await freePort();
    // Every process of the scenario gets the WEBHOOK_* settings (the worker processes through startService too).
    const serviceStart = (name, port, env = {}, args = []) =>
      startService(name, port, { ...environment, MESSAGE_WORKER: 'false', ...env }, args);
    http = serviceStart('webhooks-http', httpPort);
    const base = `http://127.0.0.1:${httpPort}`;
    await waitUntil('the service (webhooks, HTTP only)', http, () => fetch(`${base}/health/ready`).then((r) => r.ok));
    const tag = `wh-${randomBytes(3).toString('hex')}`;
    const t0 = Date.now();
    const endpoints = await createEndpoints(base, receiverBase, settings.endpoints, tag);
    const setupSeconds = +((Date.now() - t0) / 1000).toFixed(1);
    const accounts = Math.ceil(settings.endpoints / ENDPOINTS_PER_ACCOUNT);
    console.log(
      `  ${endpoints.length} endpoints on ${accounts} accounts made through the API in ${setupSeconds} s; ` +
        `settings given to the service: ${Object.entries(environment)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')}`,
    );
    const pets = (
      await db.query('SELECT id FROM pets ORDER BY id DESC LIMIT $1', [Math.max(settings.changes, 1)])
    ).rows.map((r) => Number(r.id));
    if (pets.length === 0) throw new Error('the webhooks scenario needs pets to change (BENCH_PETS)');
    const ctx = {
      settings,
      db,
      adminKey,
      base,
      http,
      receiver,
      receiverPid: receiverChild.pid,
      tracker: new Tracker(receiver),
      endpoints,
      pets,
      nextPet: 0,
      tag,
      freePort,
      waitUntil,
      stopChild,
      startService: serviceStart,
      statementCount,
      statementTimes,
      topStatements,
    };
    const runs = [];
    for (let run = 1; run <= settings.runs; run++) {
      const r = await oneRun(ctx, run);
      runs.push(r);
      console.log(runText(r));
    }
    const report = { settings, environment, accounts, setupSeconds, runs, strays: ctx.tracker.strays };
    if (runs.length > 1) console.log(spreadText(report));
    return report;
  } finally {
    if (http) await stopChild(http);
    await stopChild(receiverChild);
    await removeBenchAccounts(db).catch((error) =>
      console.error(`removing the webhooks scenario's accounts: ${error.message}`),
    );
  }
}
