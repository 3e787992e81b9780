// The read-replica scenario (issue 35): the same read, served by an instance without replicas and by one with
// DATABASE_REPLICA_URLS naming a hot standby of the bench's database, each measuring the PRIMARY's CPU per read: the
// number that scales (what a read costs the one server every instance shares). On one machine both servers share its
// cores, so req/s says little; the primary's CPU per read says what moved off it.
//
// The CPU is read from /proc for the primary's backends of the bench database (utime + stime, per pid, before and
// after each round): the bench and the primary must share the machine, else only req/s is reported. The standby is the
// operator's (BENCH_REPLICA_URL): `pg_basebackup -R` of the bench's DATABASE_URL, or the test fixture
// (`node -r ./tools/openapi/register.cjs tools/bench/replica-pair.ts`, which prints both URLs).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU ticks used so far by each backend of this database (the bench's own session aside); null without /proc. */
async function backendTicks(db) {
  const { rows } = await db.query(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
  );
  const ticks = new Map();
  for (const { pid } of rows) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // After the command name in parentheses: state is field 3, utime 14 and stime 15 (proc(5)).
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks.set(pid, Number(fields[11]) + Number(fields[12]));
    } catch {
      if (ticks.size === 0 && rows.length && pid === rows[rows.length - 1].pid) return null;
    }
  }
  return ticks;
}

/** Milliseconds of CPU the backends used between two readings (a backend that ended meanwhile is not counted). */
function cpuMsBetween(before, after) {
  if (!before || !after) return null;
  let ticks = 0;
  for (const [pid, now] of after) ticks += now - (before.get(pid) ?? 0);
  return (ticks * 1000) / TICKS_PER_SECOND;
}

async function replicaInUse(base, headers) {
  const text = await fetch(`${base}/metrics`, { headers }).then((r) => r.text());
  return /^db_replica_in_use\{[^}]*\} 1$/m.test(text);
}

/**
 * `servers`: { 'primary only': base URL, 'with replica': base URL }; `db`: a session on the primary's bench database.
 * Each server gets `rounds` rounds of `seconds` (after a warm-up of `warmupSeconds`), alternating.
 */
export async function replicaScenario({ servers, db, headers, path, connections, seconds, rounds, warmupSeconds }) {
  const deadline = Date.now() + 30_000;
  while (!(await replicaInUse(servers['with replica'], headers))) {
    if (Date.now() > deadline) throw new Error('the replica never came into use (is BENCH_REPLICA_URL a hot standby?)');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const totals = Object.fromEntries(
    Object.keys(servers).map((mode) => [mode, { requests: 0, seconds: 0, cpuMs: 0, p99: [], non2xx: 0 }]),
  );
  const run = (base, duration) =>
    autocannon({ url: base, connections, duration, headers, requests: [{ method: 'GET', path }] });
  for (const base of Object.values(servers)) if (warmupSeconds > 0) await run(base, warmupSeconds);
  for (let round = 0; round < rounds; round++) {
    for (const [mode, base] of Object.entries(servers)) {
      const before = await backendTicks(db);
      const result = await run(base, seconds);
      const cpuMs = cpuMsBetween(before, await backendTicks(db));
      const total = totals[mode];
      total.requests += result.requests.total;
      total.seconds += seconds;
      total.cpuMs = cpuMs === null || total.cpuMs === null ? null : total.cpuMs + cpuMs;
      total.p99.push(result.latency.p99);
      total.non2xx += result.non2xx + result.errors + result.timeouts;
    }
  }
  const modes = Object.fromEntries(
    Object.entries(totals).map(([mode, t]) => [
      mode,
      {
        reqPerSec: Math.round(t.requests / t.seconds),
        p99: Math.max(...t.p99),
        non2xx: t.non2xx,
        primaryCpuUsPerRead: t.cpuMs === null ? null : +((t.cpuMs * 1000) / Math.max(t.requests, 1)).toFixed(1),
      },
    ]),
  );
  const [without, withReplica] = [modes['primary only'], modes['with replica']];
  return {
    path,
    modes,
    primaryCpuRatio:
      without.primaryCpuUsPerRead && withReplica.primaryCpuUsPerRead !== null
        ? +(withReplica.primaryCpuUsPerRead / without.primaryCpuUsPerRead).toFixed(3)
        : null,
  };
}
